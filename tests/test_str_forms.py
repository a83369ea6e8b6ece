"""Every form of str the C core can be handed: subclasses, legacy
(not-yet-ready) strings on Python < 3.12, and subclasses of BufferWriter."""
import sys

import pytest

from reference import legacy_str, ref_encode
from utf8pfx import BufferWriter, encode, utf8_length

TEXTS = ["", "plain", "héllo", "東京 €", "😀 x", "mixed é € 😀"]


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="legacy str objects were removed in 3.12")
@pytest.mark.filterwarnings("ignore:PyUnicode_FromUnicode:DeprecationWarning")
@pytest.mark.parametrize("text", TEXTS)
def test_legacy_string_is_made_ready_first(text):
    s = legacy_str(text)  # wchar_t storage only, not ready until someone asks
    # in a batch, after a run of short ASCII items (write_strings' ASCII
    # loop meets it first)
    w = BufferWriter()
    w.write_strings(["ab", "cd", s, "ef"])
    assert w.getvalue() == b"".join(ref_encode(x) for x in ("ab", "cd", text, "ef"))
    w = BufferWriter()
    w.write_string(s)
    assert w.getvalue() == ref_encode(text)
    assert encode(s) == ref_encode(text)
    assert utf8_length(s) == len(text.encode())


class MyWriter(BufferWriter):
    def write_line(self, s):
        return self.write_string(s + "\n")


def test_writer_subclass_works_and_keeps_attributes():
    w = MyWriter(16, errors="replace")
    w.tag = "t"
    assert w.write_line("a\ud800") == 4
    assert w.getvalue() == b"\x03a?\n"
    assert isinstance(w, BufferWriter) and w.tag == "t" and w.errors == "replace"
    assert repr(w).startswith("<") and "MyWriter" in repr(w)
    assert bytes(memoryview(w)) == w.getvalue()
