// Who holds a lock file, and whether that process is gone (SPEC §4 "Locks are never
// waited out", STYLE 23): the lock files of toolctx/node, toolctx/bun and toolctx/deno
// record their holder, and a contender on the same machine whose holder's process has
// ended takes the lock over at once instead of waiting out the lease.
//
// A holder is `{host, pid, start, boot, ns}`: the host name, the process id, the
// process's start time (field 22 of /proc/<pid>/stat: a pid used again by a later
// process has another), the boot id and the pid namespace (/proc/self/ns/pid: a
// container sharing the volume has its own pids). Each part that the platform does not
// give (no /proc: macOS; Deno without --allow-read=/proc or --allow-sys) is left out.
//
// A holder is gone only when it is certainly ours to judge: same host name, same boot,
// same pid namespace (where known), and its pid has no process (or a process started at
// another time). Anything else (another machine or container, a platform that cannot
// tell, a probe refused) is left to the lease, as before.

/**
 * @param {{
 *   hostname(): string | undefined,
 *   pid: number,
 *   readText(path: string): string | undefined,   // synchronously; undefined when missing or refused
 *   readLink(path: string): string | undefined,   // synchronously; undefined when missing or refused
 *   signalZero?(pid: number): boolean | undefined, // kill(pid, 0): false on ESRCH, true when it exists, undefined when unknown
 * }} os
 */
export function holders(os) {
  const attempt = (fn) => {
    try {
      return fn();
    } catch {
      return undefined;
    }
  };
  /** The start time of process `pid` (clock ticks after boot), or undefined. */
  const startOf = (pid) => {
    const stat = attempt(() => os.readText(`/proc/${pid}/stat`));
    if (stat === undefined) return undefined;
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" "); // after "pid (comm) "
    return fields[19]; // field 22: starttime
  };
  let self;
  /** This process, as its lock files record it. */
  function me() {
    self ??= {
      host: attempt(() => os.hostname()),
      pid: os.pid,
      start: startOf(os.pid),
      boot: attempt(() => os.readText("/proc/sys/kernel/random/boot_id"))?.trim(),
      ns: attempt(() => os.readLink("/proc/self/ns/pid")),
    };
    return self;
  }

  /** Whether the process `holder` describes has certainly ended. */
  function gone(holder) {
    const here = me();
    if (holder === null || typeof holder !== "object" || !Number.isSafeInteger(holder.pid) || holder.pid <= 0) return false;
    if (here.host === undefined || holder.host !== here.host) return false; // another machine, or unknown
    if (holder.boot !== here.boot || holder.ns !== here.ns) return false; // another boot or pid namespace, or unknown
    if (holder.pid === here.pid) return holder.start !== undefined && here.start !== undefined && holder.start !== here.start;
    if (here.start !== undefined) {
      // /proc is there: the process's entry says whether it runs, and since when.
      const start = startOf(holder.pid);
      if (start !== undefined) return holder.start !== undefined && start !== holder.start;
      // No entry: gone, unless /proc hides other users' processes (hidepid) and kill says otherwise.
      return attempt(() => os.signalZero?.(holder.pid)) !== true;
    }
    return attempt(() => os.signalZero?.(holder.pid)) === false;
  }

  return { me, gone };
}

/** The text of a lock file: its token on the first line, its holder as JSON on the second. */
export const lockText = (token, holder) => `${token}\n${JSON.stringify(holder)}\n`;

/** The token of a lock file's text (a file of an older version holds its token alone). */
export const tokenOf = (text) => {
  const nl = text.indexOf("\n");
  return nl < 0 ? text : text.slice(0, nl);
};

/** The holder a lock file's text records, or undefined. */
export function holderOf(text) {
  const nl = text.indexOf("\n");
  if (nl < 0) return undefined;
  try {
    return JSON.parse(text.slice(nl + 1));
  } catch {
    return undefined;
  }
}
