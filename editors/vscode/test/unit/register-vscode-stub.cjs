// Loaded with `node --require`: makes `require("vscode")` return the stub in vscode-stub.cjs.
"use strict";
const Module = require("node:module");
const stubPath = require.resolve("./vscode-stub.cjs");
const load = Module._load;
Module._load = function (request, parent, isMain) {
  return request === "vscode" ? load.call(this, stubPath, parent, isMain) : load.apply(this, arguments);
};
