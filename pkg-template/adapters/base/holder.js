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
// A holder is gone only when it is certainly ours to judge: same host name, same boot id
// (Linux's; where there is none, macOS or Deno without /proc, a host name could be shared
// by two machines on one network volume, so the lease decides), same pid namespace, and
// its pid has no process (or a process started at another time). A probe that is refused
// (EACCES, a permission not granted, /proc mounted with hidepid) says nothing: anything
// uncertain is left to the lease, as before.

/** What a probe of a path found missing (ENOENT), as against refused or unknown (undefined). */
const MISSING = Symbol("missing");

/**
 * @param {{
 *   hostname(): string | undefined,
 *   pid: number,
 *   readText(path: string): string | undefined,   // synchronously; throws ENOENT when missing; undefined (or another error) when refused
 *   readLink(path: string): string | undefined,   // the same
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
  /** The text at `path`, MISSING when it does not exist, undefined when it cannot be read. */
  const probe = (path) => {
    try {
      return os.readText(path);
    } catch (err) {
      return err?.code === "ENOENT" || err?.name === "NotFound" ? MISSING : undefined;
    }
  };
  /** The start time of process `pid` (clock ticks after boot), MISSING, or undefined. */
  const startOf = (pid) => {
    const stat = probe(`/proc/${pid}/stat`);
    if (typeof stat !== "string") return stat;
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" "); // after "pid (comm) "
    return fields[19]; // field 22: starttime
  };
  /** Whether /proc shows every process (no hidepid), so that a missing entry is a process gone. */
  const showsEveryProcess = () => {
    const mounts = probe("/proc/self/mounts");
    if (typeof mounts !== "string") return false;
    const proc = mounts.split("\n").find((line) => line.split(" ")[1] === "/proc");
    return proc !== undefined && !/\bhidepid=(?!0\b|off\b)/.test(proc);
  };
  let self;
  /** This process, as its lock files record it. */
  function me() {
    const text = (value) => (typeof value === "string" ? value : undefined);
    self ??= {
      host: attempt(() => os.hostname()),
      pid: os.pid,
      start: text(startOf(os.pid)),
      boot: text(probe("/proc/sys/kernel/random/boot_id"))?.trim(),
      ns: attempt(() => os.readLink("/proc/self/ns/pid")),
    };
    return self;
  }

  /** Whether the process `holder` describes has certainly ended. */
  function gone(holder) {
    const here = me();
    if (holder === null || typeof holder !== "object" || !Number.isSafeInteger(holder.pid) || holder.pid <= 0) return false;
    if (here.host === undefined || holder.host !== here.host) return false; // another machine, or unknown
    if (here.boot === undefined || holder.boot !== here.boot || holder.ns !== here.ns) return false; // not certainly this machine and pid namespace
    if (holder.pid === here.pid) return holder.start !== undefined && here.start !== undefined && holder.start !== here.start;
    const start = startOf(holder.pid);
    // The process's entry says whether it runs, and since when.
    if (typeof start === "string") return holder.start !== undefined && start !== holder.start;
    // No entry, or none readable: kill(pid, 0) tells, where the runtime has it.
    const exists = attempt(() => os.signalZero?.(holder.pid));
    if (exists !== undefined) return exists === false;
    return start === MISSING && showsEveryProcess();
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
