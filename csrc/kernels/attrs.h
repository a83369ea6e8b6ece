/*
 * Compiler attributes, defined once for the kernels and the Python glue.
 * Pure C, no Python.h; gcc and clang get the GNU attributes, MSVC its
 * __forceinline / __declspec forms, any other compiler plain C.
 *
 *   U8P_ALWAYS_INLINE  a static function forced inline: a loop body
 *                      specialised by a constant argument, or a step that
 *                      the compiler would otherwise call out of line
 *   U8P_NOINLINE       a static function kept out of its callers, so that
 *                      each caller stays small (and each specialisation
 *                      gets its own registers)
 *   U8P_COLD           a static function on a rare path: out of line, laid
 *                      out apart and optimised for size
 *   U8P_APART          a static function on a path that is rare in the
 *                      usual data but must stay fast (emoji among names):
 *                      out of line and laid out after its file's other
 *                      code (a section of its own, where the object format
 *                      has them), so the hot functions stay together
 *   U8P_EXPECT(x, v)   x, with the hint that it is usually v;
 *   U8P_LIKELY(x), U8P_UNLIKELY(x)  the same for v = 1 and v = 0
 *   U8P_PREFETCH(p)    asks the cache line at p in ahead of a read
 *                      (nothing without GNU C; p is still evaluated)
 *   U8P_ALIGN16, U8P_ALIGN32, U8P_ALIGN64  before a table's type: the
 *                      table aligned for aligned vector loads of that
 *                      many bytes
 *
 * The inline, noinline and cold forms include `static`: each is the whole
 * storage class of a file's own function, as in
 *   U8P_ALWAYS_INLINE size_t step(...)
 * A target attribute (the x86 kernels') may come before them.
 */
#ifndef UTF8PFX_ATTRS_H
#define UTF8PFX_ATTRS_H

#if defined(__GNUC__) || defined(__clang__)
#define U8P_ALWAYS_INLINE static inline __attribute__((always_inline))
#define U8P_NOINLINE static __attribute__((noinline))
#define U8P_COLD static __attribute__((noinline, cold))
#define U8P_EXPECT(x, v) __builtin_expect(!!(x), (v))
#define U8P_PREFETCH(p) __builtin_prefetch(p)
#define U8P_ALIGN16 __attribute__((aligned(16)))
#define U8P_ALIGN32 __attribute__((aligned(32)))
#define U8P_ALIGN64 __attribute__((aligned(64)))
#if defined(__ELF__)
#define U8P_APART static __attribute__((noinline, section(".text.u8p_apart")))
#else
#define U8P_APART static __attribute__((noinline))
#endif
#elif defined(_MSC_VER)
#define U8P_ALWAYS_INLINE static __forceinline
#define U8P_NOINLINE static __declspec(noinline)
#define U8P_COLD static __declspec(noinline)
#define U8P_APART static __declspec(noinline)
#define U8P_EXPECT(x, v) (x)
#define U8P_PREFETCH(p) ((void)(p))
#define U8P_ALIGN16 __declspec(align(16))
#define U8P_ALIGN32 __declspec(align(32))
#define U8P_ALIGN64 __declspec(align(64))
#else
#define U8P_ALWAYS_INLINE static inline
#define U8P_NOINLINE static
#define U8P_COLD static
#define U8P_APART static
#define U8P_EXPECT(x, v) (x)
#define U8P_PREFETCH(p) ((void)(p))
#define U8P_ALIGN16
#define U8P_ALIGN32
#define U8P_ALIGN64
#endif

#define U8P_LIKELY(x) U8P_EXPECT(x, 1)
#define U8P_UNLIKELY(x) U8P_EXPECT(x, 0)

#endif /* UTF8PFX_ATTRS_H */
