//go:build !slotd_nofastcodec

package api

// fastCodec is false in a build with the tag slotd_nofastcodec: then Codec
// marshals through grpc's proto codec, for make bench-fastpaths to measure
// what the generated marshalling saves.
const fastCodec = true
