# Sourced by the check scripts: one pinned venv per Python peer, made from the project's files.
#   ensure_venv VENV REQUIREMENTS [pip install options …]
# (Re)creates VENV with $PYTHON (default python3.11, else python3) and installs REQUIREMENTS into it
# when VENV has not been made from exactly that file yet (its copy is kept as VENV/.installed).
ensure_venv() {
  local venv="$1" requirements="$2"
  shift 2
  if [ -f "$venv/.installed" ] && cmp -s "$requirements" "$venv/.installed"; then return 0; fi
  local python="${PYTHON:-python3.11}"
  command -v "$python" > /dev/null || python=python3
  echo "== installing $venv from $requirements"
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/pip" install --quiet --progress-bar off --disable-pip-version-check "$@" -r "$requirements"
  cp "$requirements" "$venv/.installed"
}
