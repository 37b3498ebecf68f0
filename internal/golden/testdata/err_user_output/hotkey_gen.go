package model

// This file was written by hand; hotkeygen must never overwrite it.
