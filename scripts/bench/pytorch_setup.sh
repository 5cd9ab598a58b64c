# Sourced by the PyTorch comparisons (lenet_vs_pytorch.sh, cifar10_quick_vs_pytorch.sh)
# and the other benchmarks that need $python, median or median_spread.
# Debian's /usr/bin/python3 is used explicitly: the PATH python3 may be a pyenv
# without Debian's packages.
python=/usr/bin/python3

# Installs python3-torch (Debian's PyTorch 1.13) with apt-get, with sudo when
# not root, if $python cannot import torch. $1: the calling script's name.
ensure_pytorch() {
  "$python" -c 'import torch' 2>/dev/null && return 0
  echo "$1: installing python3-torch (Debian) for $python"
  local sudo=()
  [[ $EUID -eq 0 ]] || sudo=(sudo)
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-torch >/dev/null ||
    { "${sudo[@]}" apt-get update -q >/dev/null &&
      "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-torch >/dev/null; }
  "$python" -c 'import torch'
}

# The median of the numbers on standard input, one per line.
median() {
  sort -g | awk '{v[NR] = $1} END {if (NR == 0) exit 1;
    print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}

# "median (min-max)" of the numbers on standard input, one per line, to two places.
median_spread() {
  sort -g | awk '{v[NR] = $1} END { if (NR == 0) exit 1
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%.2f (%.2f-%.2f)", m, v[1], v[NR] }'
}
