#!/usr/bin/env node
// The `larik` command of the npm package: finds the binary in the platform package npm installed
// beside this one (an optional dependency, chosen by its `os`, `cpu` and `libc` fields) and runs
// it as if it had been started directly: same arguments, inherited stdio, signals passed on, its
// exit code or signal as this process's. No dependencies, so nothing else runs before it.
"use strict";

const { spawn } = require("child_process");
const { constants } = require("os");
const manifest = require("../package.json");

// This package's name is the launcher's; each platform package is `larik-<platform>-<arch>`.
const wanted = `${manifest.name}-${process.platform}-${process.arch}`;

function binaryPath() {
  if (!(wanted in (manifest.optionalDependencies || {}))) return null;
  try {
    return require.resolve(`${wanted}/bin/larik`);
  } catch {
    return null;
  }
}

// Node has no direct call for the C library; a glibc process's diagnostic report names the
// glibc version it runs with, and a musl one's does not (the way detect-libc tells them apart).
function libcName() {
  if (process.platform !== "linux") return null;
  try {
    const header = process.report.getReport().header;
    return header.glibcVersionRuntime ? `glibc ${header.glibcVersionRuntime}` : "musl";
  } catch {
    return "an unknown C library";
  }
}

function explainMissing() {
  const libc = libcName();
  const here = `${process.platform} ${process.arch}${libc ? ` (${libc})` : ""}`;
  const shipped = Object.keys(manifest.optionalDependencies || {}).map((name) => name.slice(manifest.name.length + 1));
  const lines = [`larik: no prebuilt binary for this platform: ${here}.`];
  if (shipped.includes(`${process.platform}-${process.arch}`)) {
    lines.push(
      `The package ${wanted} should hold it but is not installed: npm skips optional dependencies with`,
      "--omit=optional (or --no-optional), and skips them for another platform or C library than this one",
      "(Linux packages are for glibc). Install again without that option.",
    );
  } else {
    lines.push(`Prebuilt binaries on npm: ${shipped.join(", ")} (Linux: glibc).`);
  }
  const repository = (manifest.homepage || "").replace(/\/$/, "");
  lines.push(
    "Other ways to install Larik:",
    "  pipx install larik            (or: uvx larik acp, pip install larik)",
    "  cargo binstall larik",
    `  the release archive larik-${manifest.version}-<target>.tar.gz from ${repository}/releases`,
    "  cargo install --locked --path rpc-server   (from a checkout of the source)",
  );
  return lines.join("\n");
}

const binary = binaryPath();
if (binary === null) {
  process.stderr.write(`${explainMissing()}\n`);
  process.exit(1);
}

const child = spawn(binary, process.argv.slice(2), { stdio: "inherit" });

// A terminal sends Ctrl-C to the whole process group, so the binary may get SIGINT twice; an
// editor stopping the agent signals this process only, which must pass it on.
const forwarded = ["SIGINT", "SIGTERM", "SIGHUP"];
const forward = (signal) => {
  if (child.exitCode === null && child.signalCode === null) child.kill(signal);
};
for (const signal of forwarded) process.on(signal, forward);

child.on("error", (error) => {
  process.stderr.write(`larik: could not start ${binary}: ${error.message}\n`);
  process.exit(1);
});

child.on("exit", (code, signal) => {
  if (signal) {
    // Die of the same signal, so whoever started us sees what the binary saw. Node ignores a
    // few signals (SIGPIPE); then the shell's convention for a signal's death is the exit code.
    for (const name of forwarded) process.removeListener(name, forward);
    process.exitCode = 128 + (constants.signals[signal] || 0);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code === null ? 1 : code);
});
