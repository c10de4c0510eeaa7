package server

// MaskID is maskID, for tests.
var MaskID = maskID
