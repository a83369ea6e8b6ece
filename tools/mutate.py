#!/usr/bin/env python3
"""Mutation check: does the test suite catch deliberate bugs in the C?

Each mutant is one small edit to csrc/ (the glue or a kernel).  For each,
on a temporary copy of the checkout: apply the edit, build the extension in
place (-O0, fast to compile), run README's test command (the default set,
on every core; stops at the first failure) and, with --slow, the slow set
after it, and record whether the suite failed ("caught"), the build broke,
or everything passed ("SURVIVED": a hole in the tests).

    python tools/mutate.py              all mutants
    python tools/mutate.py M03 M07      some of them (--no-baseline: skip the
                                        unmutated run that must pass first;
                                        --slow: the slow set too)
    python tools/mutate.py --list

Needs a C compiler and the test extras (pytest, pytest-xdist, hypothesis)
in the running interpreter: run it with the interpreter of your test venv
(.venv/bin/python tools/mutate.py).  A mutant whose pytest never reached a
verdict (exit 2-5 with no failed test or crash reported: no xdist, a bad
option) is NOT RUN, never caught; xdist ends a run that -x stopped at a
failure with exit 2, which reports the failure.  Not
run in CI (a few minutes per mutant on 2 cores).
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# id, file, exact text, replacement, what the bug is
MUTANTS = [
    ("M01", "csrc/writer/writer.c", "    res = PyLong_FromSsize_t(r);\n    if (res == NULL)\n        w->len = start;",
     "    res = PyLong_FromSsize_t(r);", "a write whose result int fails is kept (no rollback)"),
    ("M02", "csrc/writer/writer.c", "    need = w->len + extra;\n    if (w->exports > 0) {",
     "    need = w->len + extra;\n    if (0) {", "growth ignores live buffer exports"),
    ("M03", "csrc/writer/writer.c", "    if (self->exports > 0) {\n        PyErr_Format(PyExc_BufferError,\n                     \"BufferWriter cannot be cleared",
     "    if (0) {\n        PyErr_Format(PyExc_BufferError,\n                     \"BufferWriter cannot be cleared", "clear() ignores live exports"),
    ("M04", "csrc/writer/writer.c", "fail:\n    self->busy = 0;\n    self->len = start;",
     "fail:\n    self->busy = 0;", "write_strings keeps a partial batch on error"),
    ("M05", "csrc/core/encode.c", "    if (bw != pw) /* crossed a width boundary",
     "    if (0) /* crossed a width boundary",
     "one pass (write_string, UCS4 encode()): a body whose prefix width changed is not moved"),
    ("M06", "csrc/writer/writer.c", "(Py_ssize_t)u8p_prefix_size(pf, (uint64_t)worst) + worst <= w->cap - w->len) {",
     "(Py_ssize_t)u8p_prefix_size(pf, (uint64_t)worst) + worst - 1 <= w->cap - w->len) {",
     "one-pass room check one byte short"),
    ("M07", "csrc/writer/writer.c", "    if (u8p_writer_reserve(w, worst) < 0)\n        PyErr_Clear();",
     "    if (u8p_writer_reserve(w, body) < 0)\n        PyErr_Clear();",
     "batch presize reserves the least, not the worst case"),
    ("M08", "csrc/writer/writer.c", "    newcap = w->cap <= PY_SSIZE_T_MAX / 2 ? w->cap * 2 : PY_SSIZE_T_MAX;",
     "    newcap = w->cap <= PY_SSIZE_T_MAX / 2 ? w->cap + w->cap / 2 : PY_SSIZE_T_MAX;", "growth factor 1.5 instead of 2"),
    ("M09", "csrc/writer/writer.c", "    if (extra > PY_SSIZE_T_MAX - w->len) {\n        PyErr_NoMemory();\n        return -1;\n    }",
     "", "no overflow check on len + extra"),
    ("M10", "csrc/kernels/prefix.h", "    size_t k = 1;\n    while (n >= 0x80) {",
     "    size_t k = 1;\n    while (n > 0x80) {", "vint_size off by one at 128"),
    ("M11", "csrc/kernels/generic/scalar_inl.h", "            *d++ = (uint8_t)(0xE0 | (c >> 12));\n            *d++ = (uint8_t)(0x80 | ((c >> 6) & 0x3F));\n            *d++ = (uint8_t)(0x80 | (c & 0x3F));\n        }\n        i++;",
     "            *d++ = (uint8_t)(0xE0 | (c >> 12));\n            *d++ = (uint8_t)(0x80 | ((c >> 5) & 0x3F));\n            *d++ = (uint8_t)(0x80 | (c & 0x3F));\n        }\n        i++;", "scalar 3-byte encoder: wrong shift"),
    ("M12", "csrc/core/encode.c", "                                          v->obj, start, end, \"surrogates not allowed\");",
     "                                          v->obj, start, end + 1, \"surrogates not allowed\");", "UnicodeEncodeError end off by one"),
    ("M13", "csrc/reader/reader.c", "    if (c->strict_vint && !minimal) {", "    if (0) {", "strict_vint not enforced"),
    ("M14", "csrc/reader/reader.c", "    if (n > (uint64_t)(c->len - p)) {", "    if (n > (uint64_t)(c->len - p) + 1) {", "length check one byte past the data"),
    ("M15", "csrc/reader/reader.c", "    b = k ? PyBytes_FromStringAndSize((const char *)c.data + off, n) : Py_NewRef(Py_None);\n    if (b != NULL) {\n        self->pos = pos;",
     "    self->pos = pos;\n    b = k ? PyBytes_FromStringAndSize((const char *)c.data + off, n) : Py_NewRef(Py_None);\n    {",
     "read_bytes moves the position when its bytes cannot be made"),
    ("M16", "csrc/reader/reader.c", "        set_ssize_attr(value, \"data_offset\", payload_off + start) < 0)", "        set_ssize_attr(value, \"data_offset\", payload_off) < 0)", "data_offset misses the in-payload start"),
    ("M17", "csrc/reader/reader.c", "    if (annotate_exc(exc, payload_off) == 0)\n        PyErr_SetObject(",
     "    annotate_exc(exc, payload_off);\n    PyErr_SetObject(", "UnicodeDecodeError raised without its offsets when annotating fails"),
    ("M18", "csrc/reader/reader.c", "    PyTypeObject *tp = Py_TYPE(self);\n    PyObject_GC_UnTrack(self);\n    reader_release(self);",
     "    PyTypeObject *tp = Py_TYPE(self);\n    PyObject_GC_UnTrack(self);", "reader never releases its buffer export"),
    ("M19", "csrc/writer/writer.c", "    u8p_objlock_free(&self->nogil);\n    Py_XDECREF(self->errors);",
     "    u8p_objlock_free(&self->nogil);",
     "writer leaks its errors name"),
    ("M20", "csrc/writer/writer.c", "    if (self->busy) {\n        /* a view taken mid-batch", "    if (0) {\n        /* a view taken mid-batch",
     "views allowed in the middle of write_strings"),
    ("M22", "csrc/kernels/decode_short.h", "(c == 0xED && c1 > 0x9F))", "(c == 0xED && c1 > 0xBF))",
     "short one-pass decoder takes surrogates under strict"),
    ("M23", "csrc/writer/writer_short.h", "        if (n < 0x80 && n < cap - len) {\n            uint8_t *dst",
     "        if (n < 0x80 && n <= cap - len) {\n            uint8_t *dst",
     "short-ASCII fast path: room check one byte short"),
    ("M24", "csrc/kernels/x86/x86_avx512.c",
     "        if (_mm512_cmpge_epu32_mask(m, k800) != 0xFFFF)\n            break;",
     "        if (0)\n            break;",
     "AVX-512 UCS4 rounds: no surrogate check"),
    ("M26", "csrc/kernels/x86/decode_x86.c", "0x80, 0x800, 0x10000, 0, 0, 0, 0,",
     "0x80, 0x7FF, 0x10000, 0, 0, 0, 0,",
     "VBMI short decoder takes an overlong 3-byte form (U+07FF)"),
    ("M27", "csrc/writer/writer_short.h", "            if (done != (size_t)n)\n                return 0;",
     "            if (0)\n                return 0;",
     "short path keeps the output of a str the kernel stopped at a surrogate"),
    ("M28", "csrc/core/encode.h", "(const __m128i *)(src + k - 16))) >>\n        (16 - k);",
     "(const __m128i *)(src + k - 16))) >>\n        (17 - k);",
     "reader's short ASCII check: the head's mask drops the payload's first byte"),
    ("M29", "csrc/writer/writer_short.h", "            if (n <= 32 && 16 + n < cap - len)",
     "            if (n <= 32 && n < cap - len)",
     "short ASCII copy takes 16 bytes of room it may not have"),
    ("M30", "csrc/core/encode.h", "        (n > 16 ? 0xFFFFu : 0u);",
     "        0u;",
     "reader's short ASCII check misses the payload's bytes past 16"),
    ("M31", "csrc/core/encode.h", "                         _mm_andnot_si128(keep, _mm_loadu_si128(",
     "                         _mm_and_si128(keep, _mm_loadu_si128(",
     "reader's short ASCII copy does not keep the str header bytes it rewrites"),
    ("M32", "csrc/reader/reader.c", "    Py_XDECREF(made); /* refused after the str was made */",
     "    /* leaked */",
     "reader: a short payload the vector decoder refuses after making its str leaks the str"),
    ("M33", "csrc/core/encode.h", "                        _mm_srl_epi64(hi, _mm_cvtsi64_si128(s - 64)));",
     "                        _mm_setzero_si128());",
     "writer's short ASCII copy (SSE2): the high half is not moved down for heads of 8 bytes or fewer"),
    ("M34", "csrc/core/encode.h", "                                     _mm_sll_epi64(hi, _mm_cvtsi64_si128(64 - s))),",
     "                                     _mm_sll_epi64(hi, _mm_cvtsi64_si128(63 - s))),",
     "writer's short ASCII copy (SSE2): the bits carried into the low half are off by one"),
    ("M35", "csrc/kernels/x86/x86_consts.c", "[U8P_S_H0800] = 0x08000800u",
     "[U8P_S_H0800] = 0x10001000u",
     "VBMI2 UCS2 short steps (kernel and writer): take U+0800..U+0FFF as two bytes"),
    ("M36", "csrc/writer/writer_short.h", "            if (n > 2 && n <= 32) {",
     "            if (n > 2 && n <= 33) {",
     "writer's inline VBMI2 step takes 33 code points into its 32 lanes"),
    ("M37", "csrc/kernels/short_vbmi2.h", "    const __m512i w = _mm512_cvtepu8_epi16(",
     "    const __m512i w = _mm512_cvtepi8_epi16(",
     "VBMI2 UCS1 short step: Latin-1 bytes sign-extended"),
    ("M38", "csrc/kernels/x86/x86_consts.c", "[U8P_S_WF800] = 0xFFFFF800u",
     "[U8P_S_WF800] = 0xFFFFF000u",
     "writer's inline VBMI2 lanes step (UCS2, UCS4) misses surrogates"),
    ("M39", "csrc/kernels/short_vbmi2.h", ": _mm512_maskz_loadu_epi32(lanes, (const uint32_t *)src + i);",
     ": _mm512_maskz_loadu_epi32(lanes, (const uint32_t *)src + (i ? i - 1 : 0));",
     "writer's inline VBMI2 UCS4 lanes step: the second step reloads the first's last code point"),
    ("M40", "csrc/kernels/short_vbmi2.h", "const __mmask64 m = u8p_low_bits64(n);",
     "const __mmask64 m = u8p_low_bits64(n ? n - 1 : 0);",
     "write_strings' VBMI2 masked ASCII copy drops the last character"),
    ("M41", "csrc/writer/writer_short.h", "        if (U8P_EXPECT((size_t)n <= 32, 1))",
     "        if (U8P_EXPECT((size_t)n <= 33, 1))",
     "write_strings' VBMI2 ASCII run moves 33 characters in its 32-byte store"),
    ("M42", "csrc/writer/writer.c",
     "        if ((self)->prefix == U8P_PFX_VARINT && (self)->enc == U8P_ENC_UTF8 && \\\n",
     "        if ((self)->enc == U8P_ENC_UTF8 && \\\n",
     "write_string's short path (both builds) writes a varint prefix whatever the writer's preset"),
    ("M43", "csrc/writer/writer_short.h", "    for (; idx < size && len <= cap - 33; idx++) {",
     "    for (; idx < size && len <= cap - 32; idx++) {",
     "write_strings' ASCII run: room check one byte short (its 32-byte store)"),
    ("M44", "csrc/writer/writer.c", "                return Py_NewRef((self)->ints[r_]);                           \\\n",
     "                return (self)->ints[r_];                                      \\\n",
     "write_string's short path hands back its int without a new reference"),
    ("M45", "csrc/core/state.c", "        if ((st->ints[i] = PyLong_FromLong((long)i)) == NULL)",
     "        if ((st->ints[i] = PyLong_FromLong(i < 100 ? (long)i : (long)i - 1)) == NULL)",
     "the module's table of short results is wrong from 100 on"),
    ("M46", "csrc/kernels/short_vbmi2.h",
     "    return n + (size_t)__builtin_popcount((unsigned)big);",
     "    return n + (size_t)__builtin_popcount((unsigned)big) + (n == 5);",
     "the VBMI2 two-byte room step counts one byte too many at 5 units"),
    ("M47", "csrc/kernels/short_vbmi2.h",
     "        _mm512_storeu_si512((void *)(dst + first), o);",
     "        _mm512_storeu_si512((void *)(dst + first - 1), o);",
     "the UCS2 room step stores its second 16 units one byte early"),
    ("M48", "csrc/writer/writer_short.h",
     "        if (n <= 63 && cap - len > U8P_VBMI2_ROOM + 1) {",
     "        if (n <= 63 && cap - len > 64) {",
     "the writer takes the room steps with less than their room free"),
    ("M49", "csrc/kernels/x86/x86_consts.c", "[U8P_S_H07FF] = 0x07FF07FFu",
     "[U8P_S_H07FF] = 0x03FF03FFu",
     "the UCS2 room steps miss the low surrogates (U+DC00..U+DFFF)"),
    ("M50", "csrc/kernels/short_vbmi2.h",
     "    a = _mm512_mask_blend_epi16(m80, c, a);",
     "    a = _mm512_mask_blend_epi16(m800, c, a);",
     "the UCS2 one-step room step writes two-byte units as ASCII"),
    ("M51", "csrc/kernels/short_vbmi2.h",
     "    return first + u8p_vbmi2_short_ucs1_room(src + 32, n - 32, dst + first);",
     "    return first + u8p_vbmi2_short_ucs1_room(src + 32, n - 33, dst + first);",
     "the UCS1 two-step room step drops the last unit (33-63 units)"),
    ("M52", "csrc/kernels/short_vbmi2.h",
     "    second = u8p_vbmi2_short_ucs2_any_room(src + 32, n - 32, dst + first);",
     "    second = u8p_vbmi2_short_ucs2_any_room(src + 32, n - 32, dst + first - 1);",
     "the UCS2 two-step room step stores its second part one byte early"),
    ("M53", "csrc/kernels/short_vbmi2.h",
     "    const size_t hi = n > 64 ? n - 64 : 0;",
     "    const size_t hi = n > 65 ? n - 65 : 0;",
     "the 128-byte ASCII room copy drops the 65th character"),
    ("M54", "csrc/kernels/short_vbmi2.h",
     "                       (c & 0x3F) << 24;",
     "                       (c & 0x1F) << 24;",
     "the one-code-point UCS4 step drops bit 5 of the code point"),
    ("M55", "csrc/writer/writer_short.h",
     "                else if (n <= 42 && cap - len > U8P_VBMI2_ROOM_UCS2_42 + 1)",
     "                else if (n <= 42 && cap - len > U8P_VBMI2_ROOM + 1)",
     "the short path takes the two-step UCS2 room step with 32 bytes too few free"),
    ("M56", "csrc/arrow/arrow_in.c",
     "write_offsets_chunk(const aw_ctx *c, const struct ArrowArray *a)\n{\n"
     "    const int large = c->kind == AK_LARGE_UTF8;\n"
     "    const int64_t len = a->length, base = a->offset;",
     "write_offsets_chunk(const aw_ctx *c, const struct ArrowArray *a)\n{\n"
     "    const int large = c->kind == AK_LARGE_UTF8;\n"
     "    const int64_t len = a->length, base = 0;",
     "Arrow in ignores a slice's start (the array's offset) on utf8 chunks"),
    ("M57", "csrc/arrow/arrow_in.c",
     "    return validity == NULL || ((validity[bit >> 3] >> (bit & 7)) & 1);",
     "    return validity == NULL || !((validity[bit >> 3] >> (bit & 7)) & 1);",
     "Arrow in reads the validity bitmap inverted (nulls as values)"),
    ("M58", "csrc/arrow/arrow_in.c",
     "    return large ? ((const int64_t *)offsets)[i] : (int64_t)((const int32_t *)offsets)[i];",
     "    return large ? ((const int64_t *)offsets)[i]\n"
     "                 : (int64_t)((const int32_t *)offsets)[i] + (i == 2);",
     "Arrow in reads the third utf8 offset one byte too far"),
    ("M59", "csrc/arrow/arrow_out.c",
     "            ((int32_t *)*offs)[i] = (int32_t)at;",
     "            ((int32_t *)*offs)[i] = (int32_t)at + (i == 2);",
     "Arrow out writes the third offset one byte too far"),
    ("M60", "csrc/kernels/prefix.h",
     "    case U8P_PFX_U16BE:\n        return 0xFFFFu;",
     "    case U8P_PFX_U16BE:\n        return 0x10000u;",
     "the u16be preset's width check lets a 65,536-byte body through"),
    ("M61", "csrc/arrow/arrow_in.c",
     "        if (c->w->len >= fl->flush_size && flush_now(c) < 0)",
     "        if (0 && flush_now(c) < 0)",
     "StreamWriter.write_arrow never flushes between slices (memory unbounded)"),
    ("M62", "csrc/arrow/arrow_in.c",
     "                keep_rows_before_failure(c, &s);\n",
     "",
     "StreamWriter.write_arrow drops the good rows of a failing slice after a flush"),
    ("M63", "csrc/arrow/arrow_in.c",
     "    s.offset = a->offset + from;",
     "    s.offset = a->offset;",
     "StreamWriter.write_arrow's slices all start at the chunk's first row"),
    ("M64", "csrc/kernels/x86/x86_avx512.c",
     "            if (_mm512_cmpeq_epi16_mask(_mm512_and_si512(next, kF800), kD800))",
     "            if (0 && _mm512_cmpeq_epi16_mask(_mm512_and_si512(next, kF800), kD800))",
     "the Intel table's long UCS2 loop stores a whole vector before a surrogate "
     "(past the room of what it encodes)"),
    ("M65", "csrc/kernels/x86/x86_enc_impl.h",
     "    n2 = 12 + (size_t)__builtin_popcountll(m & 0xFFFFFF);",
     "    n2 = 12 + (size_t)__builtin_popcountll(m & 0x55FFFF);",
     "the UCS2 3-byte step counts a 3-byte sequence of its fourth quarter as 2 bytes "
     "(the last stores land early)"),
    ("M66", "csrc/reader/reader.c",
     "            memcpy(PyUnicode_1BYTE_DATA(s), p, lead);",
     "            memcpy(PyUnicode_1BYTE_DATA(s), p, lead ? lead - 1 : 0);",
     "a mostly-ASCII payload resumed after the ASCII copy loses the last byte of the "
     "copied part"),
    ("M67", "csrc/kernels/x86/decode_x86_impl.h",
     "    return vmhigh(acc) ? last : n;",
     "    return vmhigh(acc) ? n - 1 : n;",
     "copy_ascii's last part says the payload is ASCII up to its last byte when it "
     "is not"),
    ("M68", "csrc/kernels/x86/decode_x86.c",
     "        bad |= (SHORT_MASK(IS_ED) & l3) << 1 & cont & ~lt_a0;  /* ED A0..BF */",
     "        bad |= (SHORT_MASK(IS_ED) & l3) << 1 & cont & lt_a0;  /* ED A0..BF */",
     "the AVX2 short decoder lets an encoded surrogate (ED A0..BF) through and "
     "refuses ED 80..9F"),
    ("M69", "csrc/kernels/x86/decode_x86.c",
     "    hi = SHORT_MASK(MSB) & live;\n    if (!hi) { /* ASCII (the reader takes those up to 32 bytes "
     "inline) */\n        d = (uint8_t *)alloc(ctx, n, 0x7F);\n        if (d == NULL)\n"
     "            return -2;\n        copy_small(d, s, n);",
     "    hi = SHORT_MASK(MSB);\n    if (!hi) { /* ASCII (the reader takes those up to 32 bytes "
     "inline) */\n        d = (uint8_t *)alloc(ctx, n, 0x7F);\n        if (d == NULL)\n"
     "            return -2;\n        copy_small(d, s, n);",
     "the AVX2 short decoder takes a non-ASCII byte it may read after the payload "
     "as the payload's"),
    ("M70", "csrc/stream/stream_writer.c",
     "    self->produced += n;\n    if (self->w->len >= self->flush_size) {",
     "    if (self->w->len >= self->flush_size) {",
     "StreamWriter's one-record methods do not advance the position"),
    ("M71", "csrc/stream/stream_writer.c",
     "refused:\n    sw_note(self, 0);",
     "refused:",
     "a record StreamWriter's one-record methods refuse raises without records_accepted"),
    ("M72", "csrc/stream/stream_writer.c",
     "    if (self->w->len >= self->flush_size) {",
     "    if (self->w->len > 2 * self->flush_size) {",
     "StreamWriter's one-record methods flush only past twice flush_size"),
    ("M73", "csrc/kernels/x86/x86_enc_impl.h",
     "            if (steps > 63)\n                steps = 63;",
     "            if (steps > 64)\n                steps = 64;",
     "the long Latin-1 length pass lets its byte counters reach 256 (wrap to 0)"),
    ("M74", "csrc/arrow/arrow_in.c",
     "            if (size < 0 || (uint64_t)(uint32_t)idx >= nvar || off < 0\n",
     "            if (size < 0 || (uint64_t)(uint32_t)idx >= nvar\n",
     "write_arrow's lean string_view size pass lets a negative data offset through"),
    ("M75", "csrc/kernels/x86/decode_x86.c",
     "    if (SHORT_MASK(GE_F0) & hi) {\n",
     "    if (SHORT_MASK(GE_F0)) {\n",
     "the AVX2 short decoder leaves to the inline loop every payload with an ASCII byte"),
    ("M76", "csrc/kernels/x86/decode_x86.c",
     "    bad |= (SHORT_MASK(IS_F4) & l4) << 1 & ~lt_90; /* F4 90..BF */",
     "    bad |= (SHORT_MASK(IS_F4) & l4) << 1 & lt_90; /* F4 90..BF */",
     "the AVX2 4-byte short path lets a code point above U+10FFFF (F4 90..BF) through "
     "and refuses F4 80..8F"),
    ("M77", "csrc/kernels/x86/decode_x86.c",
     "_mm256_and_si256(_mm256_shuffle_epi8(t, gather), _mm256_set1_epi32(0x3F3F3FFF))",
     "_mm256_shuffle_epi8(t, gather)",
     "the AVX2 4-byte short path lets the bytes after a lane's lead keep their lead bits"),
    ("M78", "csrc/kernels/x86/decode_x86.c",
     "dec23_store(d + 2 * k0, c1, k - k0, 2);",
     "dec23_store(d + 2 * k0, c1, k - k0 - 1, 2);",
     "the word-compress short decoder leaves the last code point of a UCS2 payload of over "
     "32 bytes unwritten"),
    ("M79", "csrc/reader/reader.c",
     "                if (got < room && PyUnicode_Resize(&s, (Py_ssize_t)(lead + got)) < 0) {",
     "                if (got < room && PyUnicode_Resize(&s, (Py_ssize_t)(lead + got + 1)) < 0) {",
     "a Latin-1 payload of a kilobyte or more read without a count keeps one code point too "
     "many when its str is shrunk"),
    ("M80", "csrc/kernels/x86/x86_avx512.c",
     "        const size_t back = 128 - (n - i);",
     "        const size_t back = 127 - (n - i);",
     "the long Latin-1 encoder's last block, which ends at the input's end, starts one byte "
     "off in the output"),
    ("M81", "csrc/kernels/x86/x86_avx512.c",
     "        _mm512_movepi8_mask(_mm512_or_si512(_mm512_srli_epi16(iv, 8), k->x8000));",
     "        _mm512_movepi8_mask(_mm512_or_si512(iv, k->x8000));",
     "the long Latin-1 encoder's compress step keeps the second half's leads by the first "
     "half's bytes"),
]

# The README's test command (the default set: pyproject's addopts leave the
# slow tests out) on every core; --slow runs the slow set after it for the
# mutants the default set lets through.
# test_tools' check that every mutant's text is in the sources fails on the
# mutated copy by construction: it would "catch" every mutant, so it is left out
_NOT_A_CATCH = ["--deselect",
                "tests/test_tools.py::test_every_mutant_applies_to_the_current_sources"]
DEFAULT_RUN = ["-n", "auto"] + _NOT_A_CATCH
# pytest's exit codes that mean no test ran to a verdict: interrupted,
# internal error, usage error, nothing collected (1 is "tests failed")
_NOT_A_RUN = (2, 3, 4, 5)
SLOW_RUN = ["-n", "auto", "-m", "slow"] + _NOT_A_CATCH


def copy_tree(dst):
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    for f in files:
        if not os.path.exists(os.path.join(ROOT, f)):
            continue
        os.makedirs(os.path.dirname(os.path.join(dst, f)) or dst, exist_ok=True)
        shutil.copy2(os.path.join(ROOT, f), os.path.join(dst, f))


def run_one(m, work, slow=False):
    mid, path, old, new, what = m
    src = os.path.join(work, path)
    text = open(src).read()
    if text.count(old) != 1:
        return "NOT APPLIED (text found %d times)" % text.count(old), 0.0
    open(src, "w").write(text.replace(old, new))
    t0 = time.time()
    env = dict(os.environ, UTF8PFX_DEBUG="1", UTF8PFX_HYPOTHESIS_PROFILE="dev",
               UTF8PFX_LEAK_OPS="50000", PYTHONDONTWRITEBYTECODE="1")
    env.pop("UTF8PFX_WERROR", None)
    try:
        b = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace", "--force"],
                           cwd=work, env=env, capture_output=True, text=True)
        if b.returncode:
            return "build broke", time.time() - t0
        runs = [("", DEFAULT_RUN)] + ([(" (slow set)", SLOW_RUN)] if slow else [])
        for label, args in runs:
            try:
                r = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p",
                                    "no:cacheprovider", "-p", "no:randomly"] + args,
                                   cwd=work, env=env, capture_output=True, text=True,
                                   timeout=1800)
            except subprocess.TimeoutExpired:
                return "caught%s (timeout)" % label, time.time() - t0
            failed = [l for l in r.stdout.splitlines() if l.startswith(("FAILED", "ERROR"))]
            if r.returncode in _NOT_A_RUN and failed:
                # xdist ends a run that -x stopped at a failure as
                # interrupted (exit 2): the failure is the catch
                return ("caught%s: %s" % (label, failed[0].split(" - ")[0].replace("FAILED ", "")),
                        time.time() - t0)
            if r.returncode in _NOT_A_RUN and "execnet.gateway_base.DumpError" in (
                    r.stdout + r.stderr):
                # a test failed with a report xdist could not send back (a
                # str with a lone surrogate in it): the failure is the catch
                return ("caught%s: a failure xdist could not report (DumpError)" % label,
                        time.time() - t0)
            if r.returncode in _NOT_A_RUN and "Fatal Python error" in r.stderr:
                # a worker died of the mutant (xdist then stops the run as
                # interrupted): the crash is the catch
                return "caught%s: crash (Fatal Python error)" % label, time.time() - t0
            if r.returncode in _NOT_A_RUN:
                # pytest did not run the tests (no xdist in this interpreter,
                # a bad option, an internal error): nothing was caught
                tail = (r.stderr.strip().splitlines() or ["?"])[-1]
                return ("NOT RUN%s: pytest exit %d (%s)" % (label, r.returncode, tail),
                        time.time() - t0)
            if r.returncode != 0:
                break
        else:
            return "SURVIVED", time.time() - t0
        failed = [l for l in r.stdout.splitlines() if l.startswith(("FAILED", "ERROR"))]
        how = failed[0].split(" - ")[0].replace("FAILED ", "") if failed else (
            "crash, exit %d" % r.returncode)
        return "caught%s: %s" % (label, how), time.time() - t0
    finally:
        open(src, "w").write(text)


def main(argv):
    if "-h" in argv or "--help" in argv:
        print(__doc__)
        return 0
    if "--list" in argv:
        for m in MUTANTS:
            print("%s  %-24s %s" % (m[0], m[1], m[4]))
        return 0
    baseline = "--no-baseline" not in argv
    slow = "--slow" in argv
    argv = [a for a in argv if a not in ("--no-baseline", "--slow")]
    chosen = [m for m in MUTANTS if not argv[1:] or m[0] in argv[1:]]
    work = tempfile.mkdtemp(prefix="utf8pfx-mutate-")
    try:
        copy_tree(work)
        # unmutated first: the subset must pass, or the table means nothing
        if baseline:
            res, secs = run_one(("M00", "setup.py", "from setuptools import",
                                 "from setuptools import", "none"), work)
            print("baseline (no mutation): %s in %.0f s" % (
                "passes" if res == "SURVIVED" else res, secs), flush=True)
            if res != "SURVIVED":
                return 2
        rows = []
        print("| id | file | deliberate bug | outcome | s |")
        print("|---|---|---|---|--:|")
        for m in chosen:
            res, secs = run_one(m, work, slow)
            rows.append((m, res))
            print("| %s | %s | %s | %s | %.0f |" % (m[0], m[1], m[4], res, secs), flush=True)
        caught = sum(1 for _, r in rows if r.startswith("caught"))
        print("\n%d of %d mutants caught" % (caught, len(rows)))
        return 0 if caught == len(rows) else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
