# Helpers of the measuring scripts (sourced, not run): memory cgroups (a fresh
# one below this shell's own, v1 or v2, with its hard limit set, swap off where
# the machine lets the limit cover it), dropping the page cache (both need
# root), and a share of a file's size.

# Creates the cgroup with `limit` bytes and prints its path.
make_memory_cgroup() {
  local limit=$1 name="sparseflash-bench-$$-$RANDOM" own dir
  if [ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ]; then
    own=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ {print $3}' /proc/self/cgroup)
    dir=/sys/fs/cgroup/memory$own/$name
    mkdir "$dir" && echo "$limit" > "$dir/memory.limit_in_bytes"
    [ -f "$dir/memory.memsw.limit_in_bytes" ] && echo "$limit" > "$dir/memory.memsw.limit_in_bytes"
  else
    own=$(awk -F: '$1 == "0" {print $3}' /proc/self/cgroup)
    grep -q memory "/sys/fs/cgroup$own/cgroup.subtree_control" ||
      echo +memory > "/sys/fs/cgroup$own/cgroup.subtree_control"
    dir=/sys/fs/cgroup$own/$name
    mkdir "$dir" && echo "$limit" > "$dir/memory.max" && echo 0 > "$dir/memory.swap.max"
  fi
  echo "$dir"
}

# Runs a command inside a fresh cgroup limited to `limit` bytes (no limit when
# empty), then removes the cgroup; returns the command's status.
run_limited() {
  local limit=$1 cg status=0
  shift
  if [ -z "$limit" ]; then
    "$@" || status=$?
    return $status
  fi
  cg=$(make_memory_cgroup "$limit")
  sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' _ "$cg" "$@" || status=$?
  rmdir "$cg" 2>/dev/null || true
  return $status
}

# Writes dirty pages and drops the page cache, so the next run starts cold.
drop_page_cache() {
  sync
  echo 3 > /proc/sys/vm/drop_caches || echo "cannot drop the page cache (not root?)" >&2
}

# Bytes of a share (0.5) of `bytes`, rounded down; nothing for "none".
share_of() {
  [ "$1" = none ] && return
  awk -v f="$1" -v b="$2" 'BEGIN { printf "%.0f", int(f * b) }'
}
