"""A strict reader of the Prometheus text exposition format 0.0.4, as
sp metrics writes it: every line is "# HELP name text", "# TYPE name
type" or a sample "name{label="value",...} value"; names and label names
match the format's patterns; label values use only the escapes \\\\, \\"
and \\n and are valid UTF-8; a value is a float; each family's HELP and
TYPE come once, before its samples, and its samples are together; no
series twice.  Any departure raises ValueError naming the line."""
import re

NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
VALUE = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?|"
                   r"\.[0-9]+(?:[eE][+-]?[0-9]+)?|Inf|NaN)")
TYPES = ("counter", "gauge", "histogram", "summary", "untyped")


def _label_value(text, i, where):
    """(decoded value, index after its closing quote) from text[i], the
    character after the opening quote."""
    out = []
    while i < len(text):
        c = text[i]
        if c == '"':
            return "".join(out), i + 1
        if c == "\\":
            nxt = text[i + 1:i + 2]
            if nxt not in ("\\", '"', "n"):
                raise ValueError("%s: bad escape \\%s" % (where, nxt))
            out.append("\n" if nxt == "n" else nxt)
            i += 2
            continue
        if c == "\n":
            raise ValueError("%s: raw newline in a label value" % where)
        out.append(c)
        i += 1
    raise ValueError("%s: unterminated label value" % where)


def _labels(text, where):
    """{name: value} of "{...}" text (the braces included)."""
    labels = {}
    i = 1
    while text[i:i + 1] != "}":
        m = LABEL.match(text, i)
        if m is None or text[m.end():m.end() + 2] != '="':
            raise ValueError("%s: bad label at %d" % (where, i))
        if m.group(0) in labels:
            raise ValueError("%s: label %s twice" % (where, m.group(0)))
        value, i = _label_value(text, m.end() + 2, where)
        labels[m.group(0)] = value
        if text[i:i + 1] == ",":
            i += 1
        elif text[i:i + 1] != "}":
            raise ValueError("%s: want , or } at %d" % (where, i))
    if i + 1 != len(text):
        raise ValueError("%s: bytes after the labels" % where)
    return labels


def _sample(line, where):
    m = NAME.match(line)
    if m is None:
        raise ValueError("%s: no metric name" % where)
    name, rest = m.group(0), line[m.end():]
    if rest.startswith("{"):
        end = rest.rfind("} ")
        if end < 0:
            raise ValueError("%s: labels not closed" % where)
        labels, rest = _labels(rest[:end + 1], where), rest[end + 1:]
    else:
        labels = {}
    if not rest.startswith(" ") or VALUE.fullmatch(rest[1:]) is None:
        raise ValueError("%s: bad value %r" % (where, rest))
    return name, labels, float(rest[1:])


def _comment(line, where, families, current):
    parts = line.split(" ", 3)
    if len(parts) < 4 or parts[1] not in ("HELP", "TYPE") or \
            NAME.fullmatch(parts[2]) is None:
        raise ValueError("%s: not a HELP or TYPE line" % where)
    fam = families.setdefault(parts[2], {"samples": []})
    if parts[1] in fam or fam["samples"]:
        raise ValueError("%s: %s of %s again or after its samples"
                         % (where, parts[1], parts[2]))
    if parts[1] == "TYPE" and parts[3] not in TYPES:
        raise ValueError("%s: unknown type %s" % (where, parts[3]))
    if current is not None and current != parts[2] and \
            families[current]["samples"]:
        families[current]["closed"] = True
    fam[parts[1]] = parts[3]
    return parts[2]


def parse(data):
    """{family: {"HELP", "TYPE", "samples": [(labels, value)]}} of data
    (bytes); ValueError at the first departure from the format."""
    text = data.decode("utf-8")  # raises on invalid UTF-8
    if text and not text.endswith("\n"):
        raise ValueError("the last line has no newline")
    families, current, seen = {}, None, set()
    for n, line in enumerate(text.split("\n")[:-1], 1):
        where = "line %d %r" % (n, line)
        if line.startswith("#"):
            current = _comment(line, where, families, current)
            continue
        name, labels, value = _sample(line, where)
        fam = families.get(name)
        if fam is None or "TYPE" not in fam or "HELP" not in fam:
            raise ValueError("%s: a sample before its HELP and TYPE" % where)
        if fam.get("closed") or name != current:
            raise ValueError("%s: the family's samples are not together"
                             % where)
        key = (name, tuple(sorted(labels.items())))
        if key in seen:
            raise ValueError("%s: the same series twice" % where)
        seen.add(key)
        fam["samples"].append((labels, value))
    return families


def value(families, name, **labels):
    """The value of the series of name whose labels include labels; 0
    when there is none (a counter not yet counted)."""
    for got, v in families.get(name, {}).get("samples", []):
        if all(got.get(k) == x for k, x in labels.items()):
            return v
    return 0.0


def total(families, name, **labels):
    """The sum of name's series whose labels include labels."""
    return sum(v for got, v in families.get(name, {}).get("samples", [])
               if all(got.get(k) == x for k, x in labels.items()))
