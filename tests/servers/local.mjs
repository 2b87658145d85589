// Local servers for the network adapters' tests and benchmarks: Debian's redis-server,
// s3s-fs (cargo) and Debian's PostgreSQL, each started on 127.0.0.1 on a free port (and
// PostgreSQL on a Unix socket too) and stopped by `stop()`. Nothing here contacts any
// other address.

import { execFileSync, spawn } from "node:child_process";
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createConnection, createServer } from "node:net";
import { homedir, tmpdir } from "node:os";

export const S3_ACCESS_KEY = "AKTOOLCTXTEST";
export const S3_SECRET_KEY = "SKtoolctxTestSecret0123456789";
export const S3_BUCKET = "toolctx";
// Where scripts/setup.sh's `cargo install` put it: $CARGO_HOME/bin, ~/.cargo/bin by default.
export const S3S_FS = process.env.S3S_FS_BIN ?? `${process.env.CARGO_HOME || `${homedir()}/.cargo`}/bin/s3s-fs`;

/** A TCP port nobody listens on right now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function accepting(port) {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** Starts `command args`, waits until it accepts connections on `port`; `stop()` ends it. */
async function serve(command, args, port, cleanup = () => {}) {
  const child = spawn(command, args, { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const exited = new Promise((resolve) => child.once("exit", resolve));
  // if the test process ends without stop() (a crash, a timeout), the server ends with it
  const orphan = () => child.kill("SIGKILL");
  process.once("exit", orphan);
  const deadline = Date.now() + 15_000;
  while (!(await accepting(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      cleanup();
      throw new Error(`${command} did not start on 127.0.0.1:${port}: ${stderr.slice(-500)}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return {
    port,
    child,
    async stop() {
      process.off("exit", orphan);
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
      cleanup();
    },
  };
}

/**
 * redis-server on 127.0.0.1, nothing persisted. `extra`: more arguments (e.g. ["--requirepass", "x"]);
 * `port`: a given one (to start a server again where it was).
 */
export async function startRedis(extra = [], port = undefined) {
  port ??= await freePort();
  const server = await serve(
    "redis-server",
    ["--bind", "127.0.0.1", "--port", String(port), "--save", "", "--appendonly", "no", "--protected-mode", "yes", ...extra],
    port,
  );
  return { ...server, url: `redis://127.0.0.1:${port}` };
}

/** s3s-fs on 127.0.0.1 over a fresh temporary folder, with one bucket. */
export async function startS3() {
  const port = await freePort();
  const root = mkdtempSync(`${tmpdir()}/toolctx-s3-`);
  mkdirSync(`${root}/${S3_BUCKET}`);
  const server = await serve(
    S3S_FS,
    ["--host", "127.0.0.1", "--port", String(port), "--access-key", S3_ACCESS_KEY, "--secret-key", S3_SECRET_KEY, root],
    port,
    () => rmSync(root, { recursive: true, force: true }),
  );
  return {
    ...server,
    root,
    endpoint: `http://127.0.0.1:${port}`,
    bucket: S3_BUCKET,
    accessKeyId: S3_ACCESS_KEY,
    secretAccessKey: S3_SECRET_KEY,
  };
}

export const PG_USER = "toolctx";
export const PG_PASSWORD = "pg-s3cr3t-Horse";
export const PG_DATABASE = "toolctx";

/** Debian's PostgreSQL binaries: $PG_BIN, else the newest /usr/lib/postgresql/<version>/bin. */
export function postgresBin() {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(`${root}/${v}/bin/initdb`)) : [];
  if (versions.length === 0) throw new Error("no PostgreSQL server found in /usr/lib/postgresql (scripts/setup.sh installs Debian's postgresql)");
  return `${root}/${versions.sort((a, b) => Number(b) - Number(a))[0]}/bin`;
}

/**
 * Debian's PostgreSQL over a fresh temporary data folder: initdb, then the server on a Unix
 * socket in that folder and on 127.0.0.1 on a free port (password auth there, trust on the
 * socket), one database and one role with a password. PostgreSQL refuses to run as root:
 * as root, the folder is given to the `postgres` user and every program runs as that user.
 * `stop()` stops the server (fast) and removes the folder; `crash()` is `pg_ctl stop -m
 * immediate` (a crash: no checkpoint, WAL replayed at the next start), `restart()` starts
 * it again over the same folder and port. fsync is off: the tests crash the server, not
 * the machine, and the operating system keeps what was written.
 */
export async function startPostgres() {
  const bin = postgresBin();
  const root = mkdtempSync(`${tmpdir()}/toolctx-pg-`);
  const data = `${root}/data`;
  const asRoot = process.getuid?.() === 0;
  /** @type {{ uid?: number, gid?: number }} */
  const as = {};
  if (asRoot) {
    const id = (flag) => Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }).trim());
    as.uid = id("-u");
    as.gid = id("-g");
    chownSync(root, as.uid, as.gid);
  }
  const run = (program, args) => execFileSync(`${bin}/${program}`, args, { ...as, cwd: root, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, LC_ALL: "C" } });
  const port = await freePort();
  run("initdb", ["-D", data, "-U", "postgres", "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--no-sync"]);
  const options = [`-k ${root}`, "-h 127.0.0.1", `-p ${port}`, "-c fsync=off", "-c full_page_writes=off", "-c max_connections=400", "-c shared_buffers=32MB"].join(" ");
  const pgCtl = (...args) => run("pg_ctl", ["-D", data, ...args]);
  const start = () => pgCtl("-l", `${root}/log`, "-o", options, "-w", "-t", "30", "start");
  let running = false;
  const stopNow = () => {
    if (!running) return;
    running = false;
    try {
      pgCtl("-m", "immediate", "-w", "stop");
    } catch {
      // already gone
    }
  };
  // if the test process ends without stop() (a crash, a timeout), the server ends with it, and
  // its folder goes
  const stopAndRemove = () => {
    stopNow();
    rmSync(root, { recursive: true, force: true });
  };
  process.once("exit", stopAndRemove);
  // pg_ctl's server is not a child of this process: ended by a signal (a runner's timeout), the
  // process stops it first, then ends as the signal would have ended it
  const onSignal = (signal) => {
    stopAndRemove();
    process.kill(process.pid, signal);
  };
  for (const signal of ["SIGINT", "SIGTERM"]) process.once(signal, onSignal);
  const forget = () => {
    process.off("exit", stopAndRemove);
    for (const signal of ["SIGINT", "SIGTERM"]) process.off(signal, onSignal);
  };
  try {
    start();
    running = true;
    const psql = (sql) => run("psql", ["-h", root, "-p", String(port), "-U", "postgres", "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-qAtc", sql]);
    psql(`CREATE ROLE ${PG_USER} LOGIN PASSWORD '${PG_PASSWORD}'`);
    psql(`CREATE DATABASE ${PG_DATABASE} OWNER ${PG_USER}`);
  } catch (err) {
    forget();
    stopAndRemove();
    throw new Error(`PostgreSQL did not start: ${err.stderr ?? err.message}`, { cause: err });
  }
  return {
    port,
    socketDir: root,
    /** Over TCP with the role's password. */
    connectionString: `postgresql://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${port}/${PG_DATABASE}`,
    /** Over the Unix socket (trust), as the role. */
    socketConnection: { host: root, port, user: PG_USER, database: PG_DATABASE },
    /** `pg_ctl stop -m immediate`: the server crashes; everything committed is replayed at the next start. */
    crash() {
      running = false;
      pgCtl("-m", "immediate", "-w", "stop");
    },
    restart() {
      start();
      running = true;
    },
    async stop() {
      forget();
      if (running) {
        running = false;
        pgCtl("-m", "fast", "-w", "stop");
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
}
