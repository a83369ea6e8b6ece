/*
 * The writer's short path, included twice by writer.c:
 *
 *   base   every CPU.  A non-ASCII body goes to the kernel table's encoder
 *          (u8p_K), a call.
 *   vbmi2  built for the AVX-512 VBMI2 target (where
 *          kernels/short_vbmi2.h compiles).  A UCS1, UCS2 or UCS4 str
 *          of up to 32 code points (from the lengths where the VBMI2
 *          encoders leave the scalar loop) is encoded right here by that
 *          header's steps, with no call (its room steps while the buffer
 *          has U8P_VBMI2_ROOM bytes free, from one code point and up to
 *          63 UCS1 and 42 UCS2 units; its exact steps else); the rest
 *          goes to u8p_K as in base.  ASCII of up to 32 characters is one
 *          masked load and a plain store (u8p_vbmi2_copy_ascii_room)
 *          instead of the two-move copy.
 *          write_strings runs its loop over short items (short_run)
 *          in this build, and write_string's VBMI2 build
 *          (Writer_write_string_vbmi2, the method itself on such a CPU:
 *          reaching it costs no compare and jump) its short_put.  writer.c
 *          runs this build only while u8p_K is the
 *          table whose own short encoders are those steps
 *          (U8P_VBMI2_SHORT_OK), so it changes no byte, only the call, and
 *          every test that runs the avx512 kernel level on such a CPU runs
 *          it (the other levels run base).
 *
 * Before each inclusion writer.c defines SP(name) (the build's suffix),
 * SP_ATTR (its target attribute, empty for base), SP_VBMI2 (0 or 1) and
 * SP_OUTER (how short_run is kept: inlined into write_strings for base;
 * apart for vbmi2, which a caller built for the baseline cannot inline).
 */

/* The common short case, shared by write_string's and write_strings' fast
 * paths: a compact str whose UTF-8 takes under 128 bytes at most (under
 * 128 ASCII characters, 63 UCS1, 42 UCS2, 31 UCS4) into a UTF-8 "varint"
 * writer with room for that most (the caller checks the writer's format
 * once).  ASCII is copied; the others go straight to the kernel of their
 * kind, behind the one-byte prefix.  Writes the prefix byte and the body
 * at buf + len (cap - len bytes free) and returns the bytes written, which
 * the caller adds to its length; 0 for any other str, and for one with a
 * surrogate: the kernel stops at it, nothing counts as written, and the
 * general path (which applies the error handler) starts over.  Runs no
 * Python code.  Takes the writer's fields as values so that write_strings'
 * loop keeps its length in a register (a store through dst may alias any
 * field of the writer: through the object, each item would wait for the
 * last one's store of w->len). */
U8P_ALWAYS_INLINE SP_ATTR Py_ssize_t
SP(short_put)(uint8_t *const buf, const Py_ssize_t len, const Py_ssize_t cap, PyObject *s)
{
    if (!PyUnicode_CheckExact(s))
        return 0;
    if (U8P_EXPECT(PyUnicode_IS_COMPACT_ASCII(s), 1)) { /* keeps ASCII first */
        const Py_ssize_t n = PyUnicode_GET_LENGTH(s);
        if (n < 0x80 && n < cap - len) {
            uint8_t *dst = buf + len;
            const uint8_t *src = (const uint8_t *)((PyASCIIObject *)s + 1);
            dst[0] = (uint8_t)n;
#ifdef U8P_HAVE_COPY_SLACK
#if SP_VBMI2
            /* up to 32 characters with 32 bytes of room: one masked load
             * and a plain 32-byte store (zeros past the body; a plain
             * store is cheaper than a masked store of n bytes) */
            if (n <= 32 && 33 < cap - len)
                u8p_vbmi2_copy_ascii_room(src, (size_t)n, dst + 1);
            else if (U8P_VBMI2_ROOM + 1 < cap - len) /* up to 127 */
                u8p_vbmi2_copy_ascii_room128(src, (size_t)n, dst + 1);
#else
            /* up to 32 characters with 16 bytes of room past the body
             * (the header before src is at least 40 bytes) */
            if (n <= 32 && 16 + n < cap - len)
                u8p_copy_slack(dst + 1, src, n);
#endif
            else
#endif
                copy_body(dst + 1, src, n);
            return n + 1;
        }
    }
    else if (PyUnicode_IS_COMPACT(s)) { /* compact: ready, data after the header */
        const Py_ssize_t n = PyUnicode_GET_LENGTH(s);
        const int kind = (int)PyUnicode_KIND(s);
        Py_ssize_t worst;
#if SP_VBMI2
        /* with U8P_VBMI2_ROOM bytes free past the prefix (the common case
         * in a buffer that grows by doubling), UCS1 up to 63 code units,
         * UCS2 up to 32 (42 with U8P_VBMI2_ROOM_UCS2_42 free) and UCS4 up
         * to 31 go to the VBMI2 room steps (kernels/short_vbmi2.h): plain
         * stores, and the count from compare masks, so the result waits
         * on less; every length from one, one load per 32 units.  A
         * surrogate falls to the exact path below, which hands it on as
         * before. */
        if (n <= 63 && cap - len > U8P_VBMI2_ROOM + 1) {
            const void *data = (const void *)((PyCompactUnicodeObject *)s + 1);
            uint8_t *dst = buf + len;
            size_t body = (size_t)-1;
            if (kind == PyUnicode_1BYTE_KIND)
                body = n <= 32 ? u8p_vbmi2_short_ucs1_room((const uint8_t *)data, (size_t)n, dst + 1)
                               : u8p_vbmi2_short_ucs1_room63((const uint8_t *)data, (size_t)n, dst + 1);
            else if (kind == PyUnicode_2BYTE_KIND) {
                if (n <= 32)
                    body = u8p_vbmi2_short_ucs2_room((const uint16_t *)data, (size_t)n, dst + 1);
                else if (n <= 42 && cap - len > U8P_VBMI2_ROOM_UCS2_42 + 1)
                    body = u8p_vbmi2_short_ucs2_room42((const uint16_t *)data, (size_t)n, dst + 1);
            }
            else if (n == 1)
                body = u8p_vbmi2_one_ucs4_room((const uint32_t *)data, dst + 1);
            else if (n < 32) /* 4 x 32 bytes would need a longer prefix */
                body = u8p_vbmi2_short_ucs4_room((const uint32_t *)data, (size_t)n, dst + 1);
            if (body != (size_t)-1) {
                dst[0] = (uint8_t)body;
                return (Py_ssize_t)body + 1;
            }
        }
#endif
        worst = n * u8p_max_utf8(PyUnicode_IS_ASCII(s), PyUnicode_KIND(s));
        if (worst < 0x80 && worst < cap - len) {
            const void *data = (const void *)((PyCompactUnicodeObject *)s + 1);
            uint8_t *dst = buf + len;
            size_t body, done = (size_t)n;
            const u8p_kernels *K;
#if SP_VBMI2
            /* the VBMI2 table's own short steps, inlined, from the lengths
             * where its encoders leave the scalar loop, up to 32 code
             * points: UCS1 and UCS2 below U+0800 (half the corpus's UCS2
             * names) the two-byte step, other UCS2 and UCS4 the lanes
             * step; a surrogate leaves it all to the table's encoder
             * below, which stops there.  A UCS2 str whose first unit is
             * from U+0800 (CJK, Indic: the script of a name is mostly one)
             * goes to the lanes step without trying the two-byte step,
             * which would fail on it */
            if (n > 2 && n <= 32) {
                if (kind == PyUnicode_1BYTE_KIND)
                    body = u8p_vbmi2_short_ucs1((const uint8_t *)data, (size_t)n, dst + 1);
                else if (kind == PyUnicode_2BYTE_KIND) {
                    body = (size_t)-1;
                    if (n >= U8P_VBMI2_MIN_UNITS_UCS2) {
                        if (((const uint16_t *)data)[0] < 0x800)
                            body = u8p_vbmi2_short_ucs2((const uint16_t *)data, (size_t)n, dst + 1);
                        if (body == (size_t)-1)
                            body = u8p_vbmi2_short_lanes(data, 2, (size_t)n, dst + 1);
                    }
                }
                else
                    body = n >= U8P_VBMI2_MIN_UNITS_UCS4
                               ? u8p_vbmi2_short_lanes(data, 4, (size_t)n, dst + 1)
                               : (size_t)-1;
                if (body != (size_t)-1) {
                    dst[0] = (uint8_t)body;
                    return (Py_ssize_t)body + 1;
                }
            }
#endif
            /* one or two code points: in line (u8p_enc_few, kernels.h);
             * the SIMD kernels add a call and a vector set-up there, the
             * scalar one a call */
            if (n <= 2) {
                body = u8p_enc_few(data, kind, (size_t)n, dst + 1);
                if (body == (size_t)-1)
                    return 0; /* a surrogate: the general path decides */
                dst[0] = (uint8_t)body;
                return (Py_ssize_t)body + 1;
            }
            K = u8p_K;
            /* the room forms where the writer has the room (kernels.h):
             * the common case of a buffer that grows by doubling */
            if (cap - len > worst + U8P_ENC_ROOM) {
                if (kind == PyUnicode_1BYTE_KIND)
                    body = K->enc_ucs1_room((const uint8_t *)data, (size_t)n, dst + 1);
                else if (kind == PyUnicode_2BYTE_KIND)
                    body = K->enc_ucs2_room((const uint16_t *)data, (size_t)n, dst + 1, &done);
                else
                    body = K->enc_ucs4_room((const uint32_t *)data, (size_t)n, dst + 1, &done);
            }
            else if (kind == PyUnicode_1BYTE_KIND)
                body = K->enc_ucs1((const uint8_t *)data, (size_t)n, dst + 1);
            else if (kind == PyUnicode_2BYTE_KIND)
                body = K->enc_ucs2((const uint16_t *)data, (size_t)n, dst + 1, &done);
            else
                body = K->enc_ucs4((const uint32_t *)data, (size_t)n, dst + 1, &done);
            if (done != (size_t)n)
                return 0; /* a surrogate: the general path decides */
            dst[0] = (uint8_t)body;
            return (Py_ssize_t)body + 1;
        }
    }
    return 0;
}

#if SP_VBMI2
/* write_string's VBMI2 fast path: only the room cases of short_put (ASCII
 * of up to 32 characters with 33 bytes free, up to 127 with
 * U8P_VBMI2_ROOM + 1; UCS1 up to 63 code units, UCS2 up to 32, UCS4 up to
 * 31 with U8P_VBMI2_ROOM + 1 bytes free), the same bytes and result (UCS2
 * of 33-42 units is left to short_put: its two steps, here, would make GCC
 * give the method a stack frame, which every call pays); -1 for an
 * exact str whose UTF-8 may take 128 bytes or more (past short_put's
 * limits: the caller goes straight to the general path; with the room
 * free, a compact one), 0 for anything else, which the caller hands to
 * short_put out of line.  Has no call and no address-taken local, so the
 * method built around it needs no stack frame of its own. */
U8P_ALWAYS_INLINE SP_ATTR Py_ssize_t
SP(short_put_room)(uint8_t *const buf, const Py_ssize_t len, const Py_ssize_t cap, PyObject *s)
{
    size_t n; /* unsigned: below, n <= 32 tells the compiler 0 <= n too */
    uint8_t *dst = buf + len;
    size_t body;
    if (!PyUnicode_CheckExact(s))
        return 0;
    n = (size_t)PyUnicode_GET_LENGTH(s);
    if (U8P_EXPECT(PyUnicode_IS_COMPACT_ASCII(s), 1)) {
        const uint8_t *src = (const uint8_t *)((PyASCIIObject *)s + 1);
        if (n <= 32 && 33 < cap - len)
            u8p_vbmi2_copy_ascii_room(src, n, dst + 1);
        else if (n < 128 && U8P_VBMI2_ROOM + 1 < cap - len)
            u8p_vbmi2_copy_ascii_room128(src, n, dst + 1);
        else
            return n < 128 ? 0 : -1;
        dst[0] = (uint8_t)n;
        return (Py_ssize_t)n + 1;
    }
    if (!PyUnicode_IS_COMPACT(s) || cap - len <= U8P_VBMI2_ROOM + 1)
        return 0;
    {
        const void *data = (const void *)((PyCompactUnicodeObject *)s + 1);
        const int kind = (int)PyUnicode_KIND(s);
        if (kind == PyUnicode_2BYTE_KIND) {
            if (n <= U8P_VBMI2_ANY_UCS2_MAX)
                body = u8p_vbmi2_short_ucs2_any_room((const uint16_t *)data, n, dst + 1);
            else if (n <= 32)
                body = u8p_vbmi2_short_ucs2_room((const uint16_t *)data, n, dst + 1);
            else
                return n <= 42 ? 0 : -1;
        }
        else if (kind == PyUnicode_1BYTE_KIND) {
            if (n <= 32)
                body = u8p_vbmi2_short_ucs1_room((const uint8_t *)data, n, dst + 1);
            else if (n <= 63)
                body = u8p_vbmi2_short_ucs1_room63((const uint8_t *)data, n, dst + 1);
            else
                return -1;
        }
        else if (n == 1)
            body = u8p_vbmi2_one_ucs4_room((const uint32_t *)data, dst + 1);
        else if (n < 32)
            body = u8p_vbmi2_short_ucs4_room((const uint32_t *)data, n, dst + 1);
        else
            return -1;
    }
    if (body == (size_t)-1)
        return 0;
    dst[0] = (uint8_t)body;
    return (Py_ssize_t)body + 1;
}
#endif

/* write_strings' run of short items from *idx on, as many in a row as take
 * short_put (no Python code runs: no reference needs holding, the list
 * cannot change), the length in a local; returns the new length and leaves
 * *idx at the first item that did not take it (size if all did). */
SP_OUTER SP_ATTR Py_ssize_t
SP(short_run)(uint8_t *const buf, Py_ssize_t len, const Py_ssize_t cap, PyObject *const *const it,
              const Py_ssize_t size, Py_ssize_t *const idxp)
{
    Py_ssize_t idx = *idxp, r;
    for (; idx < size; idx++) {
        W_PREFETCH_AT(it, size, idx);
        if ((r = SP(short_put)(buf, len, cap, it[idx])) == 0)
            break;
        len += r;
    }
    *idxp = idx;
    return len;
}

/* write_strings' run of short ASCII items (keys, identifiers, a list of
 * ASCII names) from *idx on: a loop of its own with the leanest test (the
 * type, the compact and ASCII bits, 33 bytes of room) and, for up to 32
 * characters, one move with no branch on the length (vbmi2: one masked
 * load and one plain 32-byte store, zeros past the body; base: the two
 * 16-byte moves of u8p_copy_slack), up to 127 the plain copy; returns the
 * new length and leaves *idx at the first item that is not one (size if
 * all were).  Apart from short_run, whose code for the other kinds it would
 * change: in one loop with them (vbmi2), it took the UCS2 names 8-11 %
 * slower. */
U8P_NOINLINE SP_ATTR Py_ssize_t
SP(ascii_run)(uint8_t *const buf, Py_ssize_t len, const Py_ssize_t cap, PyObject *const *const it,
              const Py_ssize_t size, Py_ssize_t *const idxp)
{
    Py_ssize_t idx = *idxp;
    for (; idx < size && len <= cap - 33; idx++) {
        PyObject *const s = it[idx];
        const uint8_t *src;
        Py_ssize_t n;
        W_PREFETCH_AT(it, size, idx);
        /* the state bits read directly: PyUnicode_IS_ASCII asserts that a
         * str is ready, and a legacy one (3.9-3.11) may not be; it has
         * neither bit set and goes to short_run, which leaves it to the
         * general path */
        if (!Py_IS_TYPE(s, &PyUnicode_Type) ||
            !(((PyASCIIObject *)s)->state.ascii && ((PyASCIIObject *)s)->state.compact))
            break;
        n = PyUnicode_GET_LENGTH(s);
        src = (const uint8_t *)((PyASCIIObject *)s + 1);
        if (U8P_EXPECT((size_t)n <= 32, 1))
#if SP_VBMI2
            u8p_vbmi2_copy_ascii_room(src, (size_t)n, buf + len + 1);
#elif defined(U8P_HAVE_COPY_SLACK)
            u8p_copy_slack(buf + len + 1, src, n); /* header before src: 40 bytes */
#else
            copy_body(buf + len + 1, src, n);
#endif
        else if (n < 0x80 && n < cap - len)
            copy_body(buf + len + 1, src, n);
        else
            break;
        buf[len] = (uint8_t)n;
        len += n + 1;
    }
    *idxp = idx;
    return len;
}
