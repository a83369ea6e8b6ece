/*
 * stream: StreamReader, the records of a byte stream (a binary file object
 * it pulls from, or the bytes fed to it), read through the reader's record
 * functions over a window of the stream it holds; and the C core of
 * StreamWriter (stream_writer.c), which writes through BufferWriter's
 * methods.  Their part of module assembly.
 */
#ifndef UTF8PFX_STREAM_H
#define UTF8PFX_STREAM_H

#include "core/core.h"

/* Creates StreamReader and the iterator type of its batches() in the
 * module state. */
int u8p_stream_exec(PyObject *module, u8p_state *st);
/* Creates _StreamWriterCore, the base of utf8pfx.StreamWriter, once the
 * writer's method list is assembled (it calls BufferWriter's one-record
 * methods). */
int u8p_stream_writer_exec(PyObject *module, u8p_state *st);

#endif /* UTF8PFX_STREAM_H */
