#!/usr/bin/env bash
# Lists the longest functions of a source tree (default src/), longest first:
# lines, file:line, name. Reads definitions with universal-ctags, whose end
# field gives where each function body closes.
#   scripts/function_lengths.sh [DIR] [COUNT]
set -euo pipefail
dir=${1:-src}
count=${2:-15}
ctags -R --languages=C++ --langmap=C++:+.cu --kinds-C++=f --fields=+ne -o - "$dir" |
  awk -F'\t' '{
    line = ""; end = ""; scope = ""
    for (i = 4; i <= NF; i++) {
      if ($i ~ /^line:/) line = substr($i, 6)
      else if ($i ~ /^end:/) end = substr($i, 5)
      else if ($i ~ /^(class|struct|namespace):/) { scope = $i; sub(/^[a-z]*:/, "", scope) }
    }
    if (line != "" && end != "") {
      name = (scope != "" ? scope "::" : "") $1
      printf "%d\t%s:%s\t%s\n", end - line + 1, $2, line, name
    }
  }' | sort -k1,1nr -k2,2 | head -n "$count"
