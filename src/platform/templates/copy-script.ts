import { shellQuote } from '../../util/shell-quote';

/** Where a COPY step sees its extracted files inside the one-shot container (a read-only bind). */
export const COPY_CONTEXT_MOUNT = '/tmp/.sandbox-kit-copy';

export interface CopyPlacement {
  /** Path or glob relative to the file context. */
  src: string;
  /** Absolute, or relative to `workdir`; a trailing `/` (or an existing directory) means "into this directory". */
  dest: string;
  workdir: string;
  owner: string;
  /** Applied to every copied file (not to directories). */
  mode?: number;
}

/**
 * The script a COPY step runs as root inside its one-shot container, Dockerfile-style: a directory source copies its
 * contents into the destination; a file source lands at the destination, or inside it when it ends in `/`, exists as a
 * directory, or several sources match. What was copied and the directories made for it get the owner (and its
 * primary group); the mode applies to the copied files.
 */
export function renderCopyScript(p: CopyPlacement): string {
  const dest = p.dest.startsWith('/') ? p.dest : `${p.workdir.replace(/\/$/, '')}/${p.dest}`;
  return `set -euo pipefail
shopt -s nullglob dotglob
cd ${COPY_CONTEXT_MOUNT}
SRC=${shellQuote(p.src)}
DEST=${shellQuote(dest)}
OWNER=${shellQuote(p.owner)}
MODE=${p.mode === undefined ? "''" : p.mode.toString(8).padStart(4, '0')}
id -u "$OWNER" >/dev/null 2>&1 || { echo "COPY: owner $OWNER does not exist in the image" >&2; exit 1; }
IFS=$'\\n'
matches=( $SRC )
unset IFS
existing=()
for m in "\${matches[@]}"; do
  if [ -e "$m" ] || [ -L "$m" ]; then existing+=("$m"); fi
done
if [ "\${#existing[@]}" -eq 0 ]; then
  echo "COPY: source $SRC matched nothing in the uploaded files" >&2
  exit 1
fi
into_dir=0
case "$DEST" in */) into_dir=1 ;; esac
if [ -d "$DEST" ] && [ ! -L "$DEST" ]; then into_dir=1; fi
if [ "\${#existing[@]}" -gt 1 ]; then into_dir=1; fi
placed=()
# Like mkdir -p, but the directories it creates belong to the owner, as a Dockerfile COPY --chown makes them.
mkdirs() {
  local cur="" part
  local -a parts
  IFS=/ read -ra parts <<< "$1"
  for part in "\${parts[@]}"; do
    [ -n "$part" ] || continue
    cur="$cur/$part"
    if [ ! -e "$cur" ]; then mkdir "$cur"; chown "$OWNER": "$cur"; fi
  done
}
place() {
  # $1 = source in the context, $2 = target path
  if [ -d "$1" ] && [ ! -L "$1" ]; then
    mkdirs "$2"
    for entry in "$1"/*; do
      cp -a --no-preserve=ownership "$entry" "$2/"
      placed+=("$2/$(basename "$entry")")
    done
  else
    mkdirs "$(dirname "$2")"
    cp -a --no-preserve=ownership "$1" "$2"
    placed+=("$2")
  fi
}
for m in "\${existing[@]}"; do
  if [ -d "$m" ] && [ ! -L "$m" ]; then
    [ "$into_dir" -eq 1 ] || mkdirs "$DEST"
    place "$m" "\${DEST%/}"
  elif [ "$into_dir" -eq 1 ]; then
    mkdirs "$DEST"
    place "$m" "\${DEST%/}/$(basename "$m")"
  else
    place "$m" "$DEST"
  fi
done
for p in "\${placed[@]}"; do
  chown -hR "$OWNER": "$p"
  if [ -n "$MODE" ]; then find "$p" -type f -exec chmod "$MODE" {} +; fi
  echo "COPY: $p"
done
`;
}
