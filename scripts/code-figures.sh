#!/usr/bin/env bash
# The shape figures of the code, as the codebase review counts them: the largest classes of src/main
# (file lines) and the longest methods (lines from a method's header to its closing brace), and the
# test scaffolding's size (the shared fixtures). Reads files only.
# Usage: scripts/code-figures.sh [TOP(5)]
set -euo pipefail
TOP=${1:-5}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
command -v python3 >/dev/null || { echo "code-figures: needs python3 (apt-get install python3)" >&2; exit 1; }
echo "largest classes (lines):"
find . -path '*/src/main/java/*.java' -not -path '*/target/*' -print0 | xargs -0 wc -l | grep -v ' total$' | sort -rn | head -"$TOP"
echo "longest methods (lines):"
python3 - "$TOP" <<'PY'
import os, re, sys
# A method: a line that opens a declaration with a parameter list (not a type, not a statement),
# to the brace that closes its body; strings, chars and // comments are blanked before counting braces.
header = re.compile(r'^\s*(?:(?:public|private|protected|static|final|synchronized|abstract|default|native)\s+)*[\w<>\[\],.? ]+\s+(\w+)\s*\([^;]*$')
found = []
for root, _, files in os.walk('.'):
    if '/target' in root or '/src/main/java' not in root:
        continue
    for name in files:
        if not name.endswith('.java'):
            continue
        path = os.path.join(root, name)
        lines = open(path, encoding='utf-8').read().split('\n')
        i = 0
        while i < len(lines):
            line = lines[i]
            m = header.match(line)
            if (m and not re.search(r'\b(record|class|interface|enum)\b', line)
                    and not re.match(r'^\s*(if|for|while|switch|catch|return|new|else|try|do)\b', line)
                    and '=' not in line.split('(')[0]):
                depth, started, k = 0, False, i
                while k < len(lines):
                    s = re.sub(r'"(\\.|[^"\\])*"', '""', lines[k])
                    s = re.sub(r"'(\\.|[^'\\])*'", "''", s).split('//')[0]
                    if not started and ';' in s and '{' not in s:
                        break
                    for ch in s:
                        if ch == '{':
                            depth, started = depth + 1, True
                        elif ch == '}':
                            depth -= 1
                    if started and depth == 0:
                        break
                    k += 1
                if started:
                    found.append((k - i + 1, path, i + 1, m.group(1)))
                    i = k + 1
                    continue
            i += 1
found.sort(reverse=True)
for n, path, line, method in found[:int(sys.argv[1])]:
    print(f"{n:8d} {path}:{line} {method}")
PY
echo "test fixtures (lines): testfixtures $(cat testfixtures/src/main/java/io/jcni/testfixtures/*.java 2>/dev/null | wc -l), testkit $(find testkit/src -name '*.java' -print0 | xargs -0 cat | wc -l)"
