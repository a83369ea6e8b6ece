/* BufferReader and decode()/decode_all(): see issue 4.  Registers nothing yet. */
#include "utf8pfx.h"

int
u8p_reader_exec(PyObject *module, u8p_state *st)
{
    (void)module;
    (void)st;
    return 0;
}
