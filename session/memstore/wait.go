package memstore

import "time"

func waitABit() { time.Sleep(50 * time.Microsecond) }
