// Lints arenascope's Python with ruff, run as WebAssembly (npm @astral-sh/ruff-wasm-nodejs, the
// version pinned in package-lock.json): Debian 12 packages no ruff, and this needs only node.
//
//   node tools/lint/ruff.mjs [FILE...]     (no FILE: every tracked *.py and gdbplugin/arenascope)
//   node tools/lint/ruff.mjs --installed   (exit 0 when node_modules holds what the lock pins)
//
// The settings are the [tool.ruff] table of the repo's pyproject.toml, given to ruff as they are.
// Prints `path:line:col: CODE message` per finding (columns from 1, as ruff's CLI counts them)
// and exits 1 when there is any, 0 when there is none, 2 when it cannot run (bad settings, an
// unreadable file). Set up with `npm ci` here (tools/setup-deps.sh does it once).
//
// The WebAssembly build lints a source text, not a file: it sees no paths, so the settings that
// pick or ignore files by path (include, exclude, per-file-ignores, ...) cannot work and are
// refused here rather than silently dropped, and isort cannot find first-party modules on disk:
// name them in lint.isort.known-first-party.

import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "..", "..");
const require = createRequire(import.meta.url);

// Python files that carry no .py suffix.
const EXTENSIONLESS = ["gdbplugin/arenascope"];

// Settings that act on paths, which the WebAssembly build never sees.
const PATH_SETTINGS = [
  "include", "extend-include", "exclude", "extend-exclude", "force-exclude", "respect-gitignore",
  "src", "per-file-ignores", "extend-per-file-ignores", "per-file-target-version",
];

function fail(message) {
  console.error(`ruff.mjs: ${message}`);
  process.exit(2);
}

function loadSettings() {
  const path = join(root, "pyproject.toml");
  let toml;
  try {
    const { parse } = require("smol-toml");
    toml = parse(readFileSync(path, "utf8"));
  } catch (e) {
    fail(`${path}: ${e.message}`);
  }
  const settings = toml?.tool?.ruff;
  if (!settings) {
    fail(`${path} has no [tool.ruff] table`);
  }
  for (const table of [settings, settings.lint ?? {}]) {
    for (const key of PATH_SETTINGS) {
      if (key in table) {
        fail(`pyproject.toml: ruff's WebAssembly build lints texts, not files: "${key}" cannot apply; ` +
             `use a "# noqa: CODE" comment in the file instead`);
      }
    }
  }
  return settings;
}

// Tracked Python files (git), or outside a checkout every one under the tree less build*/,
// .git and node_modules; relative to the root, sorted.
function pythonFiles() {
  let files;
  try {
    const out = execFileSync("git", ["ls-files", "-z", "--", "*.py", ...EXTENSIONLESS],
                             { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
    files = out.split("\0").filter((f) => f !== "");
  } catch {
    files = [];
    const walk = (dir) => {
      for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
        const rel = dir ? `${dir}/${entry.name}` : entry.name;
        if (entry.isDirectory()) {
          if (!/^build/.test(rel) && entry.name !== ".git" && entry.name !== "node_modules") {
            walk(rel);
          }
        } else if (entry.name.endsWith(".py") || EXTENSIONLESS.includes(rel)) {
          files.push(rel);
        }
      }
    };
    walk("");
  }
  // A file deleted in the work tree but still in the index is not there to lint.
  return files.filter((f) => existsSync(join(root, f)) && statSync(join(root, f)).isFile()).sort();
}

// True when every package of package-lock.json is in node_modules at its locked version.
function installed() {
  let lock;
  try {
    lock = JSON.parse(readFileSync(join(here, "package-lock.json"), "utf8"));
  } catch (e) {
    fail(`package-lock.json: ${e.message}`);
  }
  for (const [path, entry] of Object.entries(lock.packages ?? {})) {
    if (!path) {
      continue;  // the root project itself
    }
    try {
      if (JSON.parse(readFileSync(join(here, path, "package.json"), "utf8")).version !== entry.version) {
        return false;
      }
    } catch {
      return false;
    }
  }
  return true;
}

function main(argv) {
  if (argv.length === 1 && argv[0] === "--installed") {
    return installed() ? 0 : 1;
  }
  const settings = loadSettings();
  const { Workspace, PositionEncoding } = require("@astral-sh/ruff-wasm-nodejs");
  let workspace;
  try {
    // UTF-16 columns are JavaScript's string indices; a column is then one per character of
    // the Basic Multilingual Plane, as an editor counts it.
    workspace = new Workspace(settings, PositionEncoding.Utf16);
  } catch (e) {
    fail(`pyproject.toml [tool.ruff]: ${String(e).replace(/^(Error: )+/, "")}`);
  }
  const files = argv.length ? argv.map((f) => relative(root, resolve(f))) : pythonFiles();
  let findings = 0;
  let dirty = 0;
  for (const file of files) {
    let source;
    try {
      source = readFileSync(join(root, file), "utf8");
    } catch (e) {
      fail(`${file}: ${e.message}`);
    }
    const diagnostics = workspace.check(source);
    diagnostics.sort((a, b) => a.start_location.row - b.start_location.row ||
                               a.start_location.column - b.start_location.column);
    for (const d of diagnostics) {
      const { row, column } = d.start_location;
      console.log(`${file}:${row}:${column}: ${d.code ?? "invalid-syntax"} ${d.message}`);
    }
    findings += diagnostics.length;
    dirty += diagnostics.length ? 1 : 0;
  }
  const version = Workspace.version();
  if (findings) {
    console.log(`ruff ${version}: ${findings} finding(s) in ${dirty} of ${files.length} files`);
    return 1;
  }
  console.log(`ruff ${version}: ${files.length} files clean`);
  return 0;
}

process.exitCode = main(process.argv.slice(2));
