# Every kernel table, native and emulated.  Included from the
# Makefile; from the repository root:
#
#   make -C tests/c native          both harnesses (encode, decode) over every
#                                   table the kernel sources define whose
#                                   instruction sets this CPU has
#   make -C tests/c emu             the same kernels built a second time
#                                   against SIMDe + tests/c/emu (x86-64 only):
#                                   every x86 table runs, whatever the CPU
#   make -C tests/c emu-intrinsics  each fill-in of tests/c/emu/u8p_emu.h
#                                   against the native instruction, where the
#                                   CPU has it
#   make -C tests/c native-small    native, with the short-input cut-offs at
#   make -C tests/c emu-small       1 so the SIMD code runs at every length
#   make -C tests/c verify          all five
#
# SIMDe comes from `pip install cmeel-simde` (found by emu/find_simde.py
# with $(PYTHON)) or SIMDE_INCLUDE=/path/to/include.  The table list is
# read from the objects (gen_tables.sh), the sources from the glob in the
# Makefile, so new kernel files and tables are picked up as they come.

PYTHON ?= python3
SIMDE_INCLUDE ?= $(shell $(PYTHON) emu/find_simde.py 2>/dev/null)
VFLAGS ?= -O2 -g -Wall -Wextra
EMU_FLAGS := -march=x86-64 -mtune=generic -Wno-psabi -DU8P_EMULATED=1 \
             -Iemu/include -I$(SIMDE_INCLUDE)
# the *-small builds move the kernels' short-input cut-offs (below which a
# SIMD encoder hands the whole input to the scalar loop) down to 1, so the
# SIMD code runs at every length the harness tries, not only from 16-48 up
SMALL_FLAGS := -DU8P_SIMD_MIN_UNITS=1 -DU8P_X86_MIN_UNITS_UCS2=1 -DU8P_SSE_MIN_UNITS_UCS4=1 -DU8P_VBMI2_MIN_UNITS_UCS2=1 -DU8P_VBMI2_MIN_UNITS_UCS4=1
VBUILD := build
KNAMES := $(patsubst $(ROOT)/csrc/kernels/%.c,%,$(KSRC))
HARNESS_HDR := check.h guard.h tables.h
HARNESSES := test_kernels test_decode_kernels

.PHONY: native emu native-small emu-small emu-intrinsics verify clean-verify emu-check-simde

# $(1): build name, $(2): its flags, $(3): an order-only prerequisite
define u8p_variant
$(1)_OBJ := $$(KNAMES:%=$$(VBUILD)/$(1)/%.o)

$$(VBUILD)/$(1)/%.o: $$(ROOT)/csrc/kernels/%.c $$(KHDR) $(if $(filter emu%,$(1)),emu/u8p_emu.h emu/include/immintrin.h) | $(3)
	@mkdir -p $$(@D)
	$$(CC) $$(VFLAGS) $(2) $$(INC) -c $$< -o $$@

$$(VBUILD)/$(1)/tables.inc: gen_tables.sh $$($(1)_OBJ)
	sh gen_tables.sh $$($(1)_OBJ) > $$@

$$(VBUILD)/$(1)/%: %.c $$(VBUILD)/$(1)/tables.inc $$($(1)_OBJ) $$(HARNESS_HDR)
	$$(CC) $$(VFLAGS) $(2) $$(INC) -DU8P_TABLES_INC='"$$(VBUILD)/$(1)/tables.inc"' $$< $$($(1)_OBJ) -o $$@

$(1): $$(HARNESSES:%=$$(VBUILD)/$(1)/%)
	$(if $(filter emu%,$(1)),sh emu/baseline_check.sh $$^,@true)
	./$$(VBUILD)/$(1)/test_kernels
	./$$(VBUILD)/$(1)/test_decode_kernels
endef

$(eval $(call u8p_variant,native,,))
$(eval $(call u8p_variant,native-small,$(SMALL_FLAGS),))
$(eval $(call u8p_variant,emu,$(EMU_FLAGS),emu-check-simde))
$(eval $(call u8p_variant,emu-small,$(EMU_FLAGS) $(SMALL_FLAGS),emu-check-simde))

$(VBUILD)/test_emu_intrinsics: test_emu_intrinsics.c emu/u8p_emu.h guard.h | emu-check-simde
	@mkdir -p $(@D)
	$(CC) $(VFLAGS) -Wno-psabi -Iemu -I$(SIMDE_INCLUDE) $< -o $@

emu-intrinsics: $(VBUILD)/test_emu_intrinsics
	./$(VBUILD)/test_emu_intrinsics

verify: native native-small emu emu-small emu-intrinsics

emu-check-simde:
	@test -n "$(SIMDE_INCLUDE)" || { echo "SIMDe not found: pip install cmeel-simde (for $(PYTHON)) or set SIMDE_INCLUDE" >&2; exit 1; }

clean-verify:
	rm -rf $(VBUILD)
