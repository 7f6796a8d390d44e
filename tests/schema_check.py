"""schema_check.py - checks result JSON documents against the key tables of docs/formats.md ("Result JSON").

Not here: running the commands (tests/cli/schema.sh does) or checking values beyond their types.
Usage: python3 tests/schema_check.py docs/formats.md OUT.json...  (exit 0 when every document and the
tables themselves pass; one line per problem otherwise). The tables: one per schema ("### `hsdag-x/N`"),
rows "| `key` | type | meaning |"; "The head, then:" prepends the head table; `a.b` is key b of object a,
`a[].b` key b of the objects in array a. Every documented key must be present and every present key
documented, with its type; a key must have one type (ignoring "or null") in every table.
"""
import json
import re
import sys

ROW = re.compile(r"^\| `([^`]+)` \| ([^|]+) \|")


def parse_tables(path):
    text = open(path, encoding="utf-8").read()
    part = text[text.index("## Result JSON"):]
    nxt = re.search(r"\n## (?!Result JSON)", part)
    if nxt:
        part = part[:nxt.start()]
    schemas, head, cur, with_head = {}, {}, None, False
    for line in part.splitlines():
        m = re.match(r"^### `([^`]+)`", line)
        if m:
            cur = m.group(1)
            schemas[cur] = {}
            with_head = False
            continue
        if cur and line.startswith("The head, then"):
            schemas[cur].update(head)
            continue
        r = ROW.match(line)
        if r:
            (schemas[cur] if cur else head)[r.group(1)] = r.group(2).strip()
    return schemas


def type_ok(t, v):
    if t.endswith(" or null"):
        return v is None or type_ok(t[: -len(" or null")], v)
    if t == "string":
        return isinstance(v, str)
    if t == "boolean":
        return isinstance(v, bool)
    if t == "integer":
        return isinstance(v, int) and not isinstance(v, bool)
    if t == "number":
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    if t == "object":
        return isinstance(v, dict)
    if t.startswith("array of "):
        return isinstance(v, list) and all(type_ok(t[len("array of "):], x) for x in v if t != "array of object")
    if t.startswith("map of "):
        return isinstance(v, dict) and all(type_ok(t[len("map of "):], x) for x in v.values())
    raise ValueError("unknown type '%s' in docs/formats.md" % t)


def flatten(doc, table, prefix, out):
    """Collects (key path, value) pairs of doc as the table names them."""
    for k, v in doc.items():
        path = prefix + k
        out.append((path, v))
        t = table.get(path, "")
        if t.endswith(" or null"):
            t = t[: -len(" or null")]
        if t == "object" and isinstance(v, dict):
            flatten(v, table, path + ".", out)
        elif t == "array of object" and isinstance(v, list):
            for x in v:
                if isinstance(x, dict):
                    flatten(x, table, path + "[].", out)


def check_doc(name, doc, schemas, errors):
    if not isinstance(doc, dict) or "schema" not in doc:
        errors.append("%s: not an object with a \"schema\" key" % name)
        return
    sch = doc["schema"]
    if sch not in schemas:
        errors.append("%s: schema '%s' is not documented in docs/formats.md" % (name, sch))
        return
    table = schemas[sch]
    pairs = []
    flatten(doc, table, "", pairs)
    seen = set()
    for path, v in pairs:
        seen.add(path)
        if path not in table:
            errors.append("%s (%s): key '%s' is not documented" % (name, sch, path))
        elif not type_ok(table[path], v):
            errors.append("%s (%s): key '%s' = %s is not %s" % (name, sch, path, json.dumps(v)[:60], table[path]))
    # every documented key present (inside arrays: when the array has an element)
    for path in table:
        if path in seen:
            continue
        parent = path.rsplit("[].", 1)[0] if "[]." in path else None
        if parent is not None and not any(p == parent and v for p, v in pairs):
            continue
        errors.append("%s (%s): documented key '%s' is missing" % (name, sch, path))


def check_consistency(schemas, errors):
    kinds = {}
    for sch, table in schemas.items():
        for path, t in table.items():
            key = path.rsplit(".", 1)[-1]
            base = t[: -len(" or null")] if t.endswith(" or null") else t
            if key in kinds and kinds[key][0] != base:
                errors.append("docs/formats.md: key '%s' is %s in %s but %s in %s"
                              % (key, base, sch, kinds[key][0], kinds[key][1]))
            kinds.setdefault(key, (base, sch))


def main():
    schemas = parse_tables(sys.argv[1])
    errors = []
    if len(schemas) < 9:
        errors.append("docs/formats.md: only %d schema tables found" % len(schemas))
    check_consistency(schemas, errors)
    used = set()
    for f in sys.argv[2:]:
        try:
            doc = json.load(open(f, encoding="utf-8"))
        except ValueError as exc:
            errors.append("%s: not JSON: %s" % (f, exc))
            continue
        used.add(doc.get("schema") if isinstance(doc, dict) else None)
        check_doc(f, doc, schemas, errors)
    for e in errors:
        print(e)
    print("schema_check: %d documents, %d schemas documented, %d used; %d problems"
          % (len(sys.argv) - 2, len(schemas), len(used), len(errors)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
