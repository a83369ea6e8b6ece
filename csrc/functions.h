/*
 * The module-level encoding functions (functions.c): encode(),
 * utf8_length(), vint_size().  They need only core.
 */
#ifndef UTF8PFX_FUNCTIONS_H
#define UTF8PFX_FUNCTIONS_H

#include "core/core.h"

int u8p_functions_exec(PyObject *module);

#endif /* UTF8PFX_FUNCTIONS_H */
