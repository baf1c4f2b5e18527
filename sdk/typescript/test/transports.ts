// Compiled, not run (npm run build): both Connect transports fit
// createHangarClient, and the core's types need no Node.js types.
import { createConnectTransport as webTransport } from "@connectrpc/connect-web";
import { createConnectTransport as nodeTransport } from "@connectrpc/connect-node";
import { createHangarClient, type HangarClient } from "../src/index.js";

export const browser: HangarClient = createHangarClient({ baseUrl: "/", transport: webTransport });
export const node: HangarClient = createHangarClient({
  baseUrl: "http://127.0.0.1:8080",
  transport: nodeTransport,
  transportOptions: { httpVersion: "2" },
});
