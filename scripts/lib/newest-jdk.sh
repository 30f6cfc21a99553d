# Sourced by the scripts: sets $jdk to the newest JDK 22+ under /usr/lib/jvm or ~/.jdks (the one the
# build uses), or exits 2 naming the calling script.
jdk=
_best=0
for _d in /usr/lib/jvm/* "$HOME"/.jdks/*; do
  [[ -x $_d/bin/java && ! -L $_d ]] || continue
  _m=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$_d/release" 2>/dev/null | head -n1)
  if (( ${_m:-0} >= 22 && ${_m:-0} > _best )); then _best=$_m; jdk=$_d; fi
done
unset _best _d _m
[[ -n $jdk ]] || { echo "$(basename "$0"): no JDK 22+ found (in /usr/lib/jvm or ~/.jdks)" >&2; exit 2; }
