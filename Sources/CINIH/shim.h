// libinih is used through ini_parse_stream only: courier reads the file
// itself so that it can count lines and name them in errors.
#ifndef COURIER_CINIH_SHIM_H
#define COURIER_CINIH_SHIM_H

#include <ini.h>

#endif
