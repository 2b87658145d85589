// Local servers for the network adapters' tests and benchmarks: Debian's redis-server and
// s3s-fs (cargo), each started on 127.0.0.1 on a free port and stopped by `stop()`.
// Nothing here contacts any other address.

import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
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
