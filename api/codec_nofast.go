//go:build slotd_nofastcodec

package api

const fastCodec = false
