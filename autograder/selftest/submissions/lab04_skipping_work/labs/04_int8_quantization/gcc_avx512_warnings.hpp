#pragma once
// Include this first (before any other header) in a file that uses AVX-512 intrinsics, or xsimd's
// max and min, which are built on them.
//
// GCC 12 warns, wrongly, that those intrinsics read an uninitialised variable: its headers make an
// "undefined" register by initialising a variable with itself (GCC bug 105593, fixed in GCC 13).
// The warning is attached to the lines of GCC's own headers, so it must be off before they are
// read.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
