// Writes the two npm packages for this machine into a directory, ready for `npm pack`: the
// launcher `larik` (bin/larik.js, with every platform package as an optional dependency) and the
// platform package `larik-<platform>-<arch>` holding the binary. Called by scripts/npm.sh.
//
//   node dist/npm/stage.js --binary PATH --version X.Y.Z --target RUST_TARGET --out DIR
//
// Prints the two package directories, launcher last.
"use strict";

const fs = require("fs");
const path = require("path");

// Node's names for each platform a package exists for, the Rust target its binary is built
// for, and (Linux) the C library it links: npm installs only the package whose `os`, `cpu` and
// `libc` match the machine, and the launcher looks for `larik-${process.platform}-${process.arch}`.
const PLATFORMS = {
  "linux-x64": { os: "linux", cpu: "x64", libc: "glibc", target: "x86_64-unknown-linux-gnu" },
  "linux-arm64": { os: "linux", cpu: "arm64", libc: "glibc", target: "aarch64-unknown-linux-gnu" },
  "darwin-x64": { os: "darwin", cpu: "x64", target: "x86_64-apple-darwin" },
  "darwin-arm64": { os: "darwin", cpu: "arm64", target: "aarch64-apple-darwin" },
};

function parseArguments(argv) {
  const options = {};
  for (let index = 0; index < argv.length; index += 2) {
    const key = argv[index].replace(/^--/, "");
    if (!["binary", "version", "target", "out"].includes(key) || argv[index + 1] === undefined) {
      throw new Error(`stage.js: unknown or incomplete argument ${argv[index]}`);
    }
    options[key] = argv[index + 1];
  }
  for (const key of ["binary", "version", "target", "out"]) {
    if (!options[key]) throw new Error(`stage.js: --${key} is required`);
  }
  return options;
}

function writeJson(file, value) {
  fs.writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
}

function main() {
  const options = parseArguments(process.argv.slice(2));
  const here = `${process.platform}-${process.arch}`;
  const platform = PLATFORMS[here];
  if (!platform) throw new Error(`stage.js: no npm package is defined for ${here}`);
  // The binary must be the one npm will pick for this machine: a musl build must not go out as
  // the glibc package.
  if (platform.target !== options.target) {
    throw new Error(`stage.js: the ${here} package carries ${platform.target}, not ${options.target}`);
  }

  const root = path.resolve(__dirname, "..", "..");
  const launcher = JSON.parse(fs.readFileSync(path.join(__dirname, "larik", "package.json"), "utf8"));
  const platformName = `${launcher.name}-${here}`;

  const platformDir = path.join(options.out, platformName);
  fs.mkdirSync(path.join(platformDir, "bin"), { recursive: true });
  fs.copyFileSync(options.binary, path.join(platformDir, "bin", "larik"));
  fs.chmodSync(path.join(platformDir, "bin", "larik"), 0o755);
  fs.copyFileSync(path.join(root, "LICENSE"), path.join(platformDir, "LICENSE"));
  fs.writeFileSync(
    path.join(platformDir, "README.md"),
    `# ${platformName}\n\nThe \`larik\` binary for ${platform.os} ${platform.cpu}` +
      `${platform.libc ? ` (${platform.libc})` : ""}, built for \`${platform.target}\`. ` +
      `Install the \`${launcher.name}\` package instead: it depends on this one and runs the binary.\n`,
  );
  // No `bin` field: the launcher is the only `larik` command; this package only carries the file.
  writeJson(path.join(platformDir, "package.json"), {
    name: platformName,
    version: options.version,
    description: `The larik binary for ${here}${platform.libc ? ` (${platform.libc})` : ""}; install the ${launcher.name} package`,
    license: launcher.license,
    repository: launcher.repository,
    homepage: launcher.homepage,
    os: [platform.os],
    cpu: [platform.cpu],
    ...(platform.libc ? { libc: [platform.libc] } : {}),
    files: ["bin/larik"],
    preferUnplugged: true,
  });

  const launcherDir = path.join(options.out, launcher.name);
  fs.mkdirSync(path.join(launcherDir, "bin"), { recursive: true });
  fs.copyFileSync(path.join(__dirname, "larik", "bin", "larik.js"), path.join(launcherDir, "bin", "larik.js"));
  fs.chmodSync(path.join(launcherDir, "bin", "larik.js"), 0o755);
  fs.copyFileSync(path.join(root, "LICENSE"), path.join(launcherDir, "LICENSE"));
  fs.copyFileSync(path.join(root, "dist", "package-readme.md"), path.join(launcherDir, "README.md"));
  const optionalDependencies = {};
  for (const name of Object.keys(PLATFORMS)) optionalDependencies[`${launcher.name}-${name}`] = options.version;
  const { name, ...fields } = launcher;
  writeJson(path.join(launcherDir, "package.json"), { name, version: options.version, ...fields, optionalDependencies });

  process.stdout.write(`${platformDir}\n${launcherDir}\n`);
}

try {
  main();
} catch (error) {
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
}
