"""The one workload generator: seeded synthetic strings and the shared corpus.

A workload is a list of distinct str objects that every approach turns into
one blob.  Synthetic kinds mirror the seed benchmarks (Lucene PR #16280:
ascii / cjk / latin_ext x 1..40 / medium / long / vlarge; Ignite
IGNITE-27088: ascii / latin1 / cyrillic / mixed x 8 / 64 / 512 / 4096).
Everything is derived from a fixed seed, so two processes (or two machines
with the same Python `random`) build byte-identical workloads.
"""
import fnmatch
import functools
import os
import random
import zlib
from dataclasses import dataclass, field

from . import package_module

KINDS = ("ascii", "latin1", "latin_ext", "cyrillic", "cjk", "emoji", "mixed")
LENGTHS = (1, 8, 10, 20, 30, 40, 64, 512, 4096)
# Named sizes: code points per string, drawn in [lo, hi] per string.
NAMED = {"medium": (150, 250), "long": (1500, 2500), "vlarge": (65536, 65536)}

# How big one workload is: strings are added until their UTF-8 reaches
# TARGET_BYTES (about Lucene's 80 KB..2 MB chunk targets, small enough to
# stay cache-resident on a shared box), capped at MAX_STRINGS.
TARGET_BYTES = 256 * 1024
MAX_STRINGS = 16384
MIN_STRINGS = 2
SEED = 20261130

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS_DIR = os.path.join(REPO, "..", "shared", "corpus")

# --- alphabets (real ranges) -------------------------------------------------
_LETTER_FREQ = "eeeeeeeeeeeetttttttttaaaaaaaaoooooooiiiiiiinnnnnnnssssssrrrrrr" \
               "hhhhhhllllddddcccuuummwwffggyyppbbvkjxqz"
# Latin-1 accented letters (U+00C0..U+00FF minus the two operators).
_LATIN1 = [chr(c) for c in range(0xC0, 0x100) if c not in (0xD7, 0xF7)]
# Latin Extended-A (U+0100..U+017F): Polish, Czech, Hungarian, Turkish ...
_LATIN_EXT_A = [chr(c) for c in range(0x100, 0x180)]
_CYRILLIC = [chr(c) for c in range(0x430, 0x450)] + ["\u0451"]
_CYRILLIC_UP = [chr(c) for c in range(0x410, 0x430)]
_CJK = (0x4E00, 0x9FFF)          # CJK Unified Ideographs
_KANA = (0x3041, 0x3096)         # Hiragana
_CJK_PUNCT = ["\u3001", "\u3002", "\uff0c", "\u300c", "\u300d"]
_EMOJI_RANGES = ((0x1F300, 0x1F5FF), (0x1F600, 0x1F64F), (0x1F680, 0x1F6FF),
                 (0x1F900, 0x1F9FF))
_PUNCT = [",", ".", ",", ";", ":", "!", "?", "-", "'"]


def _seeded(name):
    return random.Random(SEED ^ zlib.crc32(name.encode()))


def _ascii_word(rng):
    w = "".join(rng.choices(_LETTER_FREQ, k=rng.randint(1, 10)))
    return w.capitalize() if rng.random() < 0.1 else w


def _accented_word(rng, accents, rate):
    """A Latin word whose letters are accented at irregular positions."""
    w = _ascii_word(rng)
    if rng.random() >= rate * len(w):
        return w
    chars = list(w)
    for i in rng.sample(range(len(chars)), rng.randint(1, max(1, len(w) // 3))):
        chars[i] = rng.choice(accents)
    return "".join(chars)


def _cyrillic_word(rng):
    w = "".join(rng.choices(_CYRILLIC, k=rng.randint(1, 11)))
    return rng.choice(_CYRILLIC_UP) + w[1:] if rng.random() < 0.1 else w


def _cjk_run(rng):
    lo, hi = _KANA if rng.random() < 0.3 else _CJK
    return "".join(map(chr, rng.choices(range(lo, hi + 1),
                                        k=rng.randint(2, 12))))


def _emoji(rng):
    lo, hi = rng.choice(_EMOJI_RANGES)
    return chr(rng.randint(lo, hi))


def _tok_latin1(rng):
    return _accented_word(rng, _LATIN1, rng.choice((0.0, 0.02, 0.06, 0.12)))


def _tok_latin_ext(rng):
    return _accented_word(rng, _LATIN1 + _LATIN_EXT_A * 2,
                          rng.choice((0.0, 0.0, 0.02, 0.06, 0.12)))


def _tok_emoji(rng):
    return _emoji(rng) if rng.random() < 0.3 else _ascii_word(rng)


def _tok_mixed(rng):
    return rng.choice((_ascii_word, _tok_latin1, _tok_latin_ext,
                       _cyrillic_word, _cjk_run, _tok_emoji))(rng)


def _ascii_sep(rng):
    return rng.choice(_PUNCT) + " " if rng.random() < 0.1 else " "


def _cjk_sep(rng):
    return rng.choice(_CJK_PUNCT) if rng.random() < 0.4 else ""


# kind: (token, separator, marker).  The marker (lowest code point, and the
# letters to draw one from) is what every string of the kind must hold, so
# that all strings of a workload share the kind's PEP 393 width.
KIND_SPEC = {
    "ascii": (_ascii_word, _ascii_sep, None),
    "latin1": (_tok_latin1, _ascii_sep, ("\x80", _LATIN1)),
    "latin_ext": (_tok_latin_ext, _ascii_sep, ("\u0100", _LATIN_EXT_A)),
    "cyrillic": (_cyrillic_word, _ascii_sep, ("\u0100", _CYRILLIC)),
    "cjk": (_cjk_run, _cjk_sep, ("\u0100", [chr(c) for c in range(*_KANA)])),
    "emoji": (_tok_emoji, _ascii_sep, ("\U00010000", None)),
    "mixed": (_tok_mixed, _ascii_sep, None),
}
POOL_CP = 200_000


@functools.lru_cache(maxsize=None)
def _pool(kind):
    """POOL_CP code points of running text of `kind` (words + separators);
    strings are cut from it at seeded random offsets."""
    rng = _seeded("pool:" + kind)
    token, sep, _ = KIND_SPEC[kind]
    parts, size = [], 0
    while size < POOL_CP:
        t = token(rng) + sep(rng)
        parts.append(t)
        size += len(t)
    return "".join(parts)


def make_string(rng, kind, n):
    """n code points of `kind`: a slice of the kind's running text."""
    pool = _pool(kind)
    off = rng.randrange(len(pool) - n)
    s = pool[off:off + n]
    marker = KIND_SPEC[kind][2]
    if marker is not None and max(s) < marker[0]:
        i = rng.randrange(n)
        m = rng.choice(marker[1]) if marker[1] else _emoji(rng)
        s = s[:i] + m + s[i + 1:]
    return s


def storage(strings):
    """PEP 393 storage of a workload: ascii, ucs1, ucs2, ucs4 or a mix."""
    kinds = set(map(package_module("_reference").storage_kind, strings))
    return kinds.pop() if len(kinds) == 1 else "mix"


@dataclass
class Workload:
    name: str
    kind: str            # synthetic kind or "corpus"
    length: object       # code points per string (int), a named size, or None
    strings: list
    group: str = ""      # "short" (<= 40 cp), "mid", "long" (>= 4096 cp)
    storage: str = field(init=False)
    utf8_bytes: int = field(init=False)
    code_points: int = field(init=False)
    # The strings serialized once per format (approaches.serialized), for
    # the reader suite; not part of the workload's identity.
    serialized: dict = field(init=False, default_factory=dict, repr=False,
                             compare=False)

    def __post_init__(self):
        self.storage = storage(self.strings)
        self.utf8_bytes = sum(len(s.encode("utf-8", "surrogatepass"))
                              for s in self.strings)
        self.code_points = sum(map(len, self.strings))

    def meta(self):
        return {"name": self.name, "kind": self.kind, "length": self.length,
                "group": self.group, "storage": self.storage,
                "strings": len(self.strings), "utf8_bytes": self.utf8_bytes,
                "code_points": self.code_points}


def _group(n_lo):
    return "short" if n_lo <= 40 else "long" if n_lo >= 4096 else "mid"


def synthetic(kind, length):
    """One synthetic workload, e.g. synthetic("cjk", 40) or ("ascii", "long")."""
    name = f"{kind}_{length}"
    rng = _seeded(name)
    lo, hi = NAMED[length] if isinstance(length, str) else (length, length)
    strings, total = [], 0
    while (len(strings) < MIN_STRINGS or total < TARGET_BYTES) \
            and len(strings) < MAX_STRINGS:
        s = make_string(rng, kind, rng.randint(lo, hi))
        strings.append(s)
        total += len(s.encode("utf-8"))
    return Workload(name, kind, length, strings, _group(lo))


# --- corpus ---------------------------------------------------------------------
CORPUS = {
    # name: (file, how a record becomes one string)
    "corpus_names": ("cldr_names.tsv", lambda f: f[1]),
    "corpus_emoji": ("cldr_emoji.tsv", lambda f: f[1] + " " + f[2]),
    "corpus_paragraphs": ("manpage_paragraphs.tsv", lambda f: f[1]),
}


def cldr_names():
    """The names of cldr_names.tsv in the corpus folder ($UTF8PFX_CORPUS_DIR
    if set), in file order; None without the file."""
    corpus_dir = os.environ.get("UTF8PFX_CORPUS_DIR", CORPUS_DIR)
    path = os.path.join(corpus_dir, "cldr_names.tsv")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n").split("\t")[1] for line in f if "\t" in line]


def corpus(name, max_strings=None):
    """Strings of one corpus file, as they are.  With max_strings, an evenly
    strided subset (keeps the file's mix of locales).  None if absent."""
    fname, pick = CORPUS[name]
    path = os.path.join(CORPUS_DIR, fname)
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        strings = [pick(line.rstrip("\n").split("\t")) for line in f]
    if max_strings and len(strings) > max_strings:
        step = len(strings) / max_strings
        strings = [strings[int(i * step)] for i in range(max_strings)]
    return Workload(name, "corpus", None, strings, "corpus")


def all_workloads(kinds=KINDS, lengths=LENGTHS + tuple(NAMED),
                  corpus_max=None, with_corpus=True, only=None, log=print):
    """Every workload of a run, in a stable order.  `only`: shell patterns
    (fnmatch) a workload name must match one of, e.g. "ascii_*" "cjk_4096"."""
    def wanted(name):
        return not only or any(fnmatch.fnmatchcase(name, o) for o in only)

    out = [synthetic(k, n) for k in kinds for n in lengths
           if wanted(f"{k}_{n}")]
    if with_corpus:
        if not os.path.isdir(CORPUS_DIR):
            log(f"note: {os.path.normpath(CORPUS_DIR)} not found: "
                "corpus workloads skipped")
        else:
            for name in CORPUS:
                if wanted(name):
                    w = corpus(name, corpus_max)
                    if w is None:
                        log(f"note: corpus file for {name} missing: skipped")
                    else:
                        out.append(w)
    return out
