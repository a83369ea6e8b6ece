# Every kernel table, native and emulated (issue #8).  Included from the
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
#   make -C tests/c verify          all three
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
VBUILD := build
KNAMES := $(patsubst $(ROOT)/csrc/kernels/%.c,%,$(KSRC))
NATIVE_OBJ := $(KNAMES:%=$(VBUILD)/native/%.o)
EMU_OBJ := $(KNAMES:%=$(VBUILD)/emu/%.o)
HARNESS_HDR := check.h guard.h tables.h

.PHONY: native emu emu-intrinsics verify clean-verify emu-check-simde

$(VBUILD)/native/%.o: $(ROOT)/csrc/kernels/%.c $(KHDR)
	@mkdir -p $(@D)
	$(CC) $(VFLAGS) $(INC) -c $< -o $@

$(VBUILD)/emu/%.o: $(ROOT)/csrc/kernels/%.c $(KHDR) emu/u8p_emu.h emu/include/immintrin.h | emu-check-simde
	@mkdir -p $(@D)
	$(CC) $(VFLAGS) $(EMU_FLAGS) $(INC) -c $< -o $@

$(VBUILD)/%/tables.inc: gen_tables.sh
	@mkdir -p $(@D)
	sh gen_tables.sh $(filter %.o,$^) > $@

$(VBUILD)/native/tables.inc: $(NATIVE_OBJ)
$(VBUILD)/emu/tables.inc: $(EMU_OBJ)

$(VBUILD)/native/%: %.c $(VBUILD)/native/tables.inc $(NATIVE_OBJ) $(HARNESS_HDR)
	$(CC) $(VFLAGS) $(INC) -DU8P_TABLES_INC='"$(VBUILD)/native/tables.inc"' $< $(NATIVE_OBJ) -o $@

$(VBUILD)/emu/%: %.c $(VBUILD)/emu/tables.inc $(EMU_OBJ) $(HARNESS_HDR)
	$(CC) $(VFLAGS) $(EMU_FLAGS) $(INC) -DU8P_TABLES_INC='"$(VBUILD)/emu/tables.inc"' $< $(EMU_OBJ) -o $@

native: $(VBUILD)/native/test_kernels $(VBUILD)/native/test_decode_kernels
	./$(VBUILD)/native/test_kernels
	./$(VBUILD)/native/test_decode_kernels

emu: $(VBUILD)/emu/test_kernels $(VBUILD)/emu/test_decode_kernels
	./$(VBUILD)/emu/test_kernels
	./$(VBUILD)/emu/test_decode_kernels

$(VBUILD)/test_emu_intrinsics: test_emu_intrinsics.c emu/u8p_emu.h guard.h | emu-check-simde
	@mkdir -p $(@D)
	$(CC) $(VFLAGS) -Wno-psabi -Iemu -I$(SIMDE_INCLUDE) $< -o $@

emu-intrinsics: $(VBUILD)/test_emu_intrinsics
	./$(VBUILD)/test_emu_intrinsics

verify: native emu emu-intrinsics

emu-check-simde:
	@test -n "$(SIMDE_INCLUDE)" || { echo "SIMDe not found: pip install cmeel-simde (for $(PYTHON)) or set SIMDE_INCLUDE" >&2; exit 1; }

clean-verify:
	rm -rf $(VBUILD)
