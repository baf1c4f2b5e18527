// build bundles the web client (src/main.ts, with the SDK's sources from
// sdk/typescript/src and the phrasebook phrase/phrases.json) into one
// file, web/static/hangar.js, which is committed: `hangar serve` embeds it
// and needs no Node.js. esbuild's output depends only on the sources and
// the versions pinned in package-lock.json, so CI rebuilds it and fails
// when the result differs from the commit.
import { build } from "esbuild";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));

// The SDK's sources import @bufbuild/protobuf and @connectrpc/connect: they
// resolve here, to this package's pinned copies, whatever sdk/typescript's
// node_modules holds, so the bundle has one copy of each.
const ours = {
  name: "ours",
  setup(b) {
    b.onResolve({ filter: /^@(bufbuild|connectrpc)\// }, (args) => {
      if (args.resolveDir.startsWith(here)) return undefined;
      return b.resolve(args.path, { kind: args.kind, resolveDir: here });
    });
  },
};

await build({
  entryPoints: [path.join(here, "src/main.ts")],
  outfile: path.join(here, "../static/hangar.js"),
  bundle: true,
  format: "esm",
  target: "es2022",
  minify: true,
  legalComments: "none",
  charset: "utf8",
  absWorkingDir: here,
  plugins: [ours],
  logLevel: "warning",
});
