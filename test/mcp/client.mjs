// Drives `podvisor mcp` with the official MCP TypeScript SDK client, as an
// agent would: initialize, list the tools, call each against a running
// podvisor with real processes, read the resources. Run by mcp_test.go:
//   PODVISOR_BIN  the podvisor binary
//   PODVISOR_CONTROL  the running podvisor's control socket
//   EXPECT_ACTIONS  "1" when its config has mcp: {actions: true}
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const actions = process.env.EXPECT_ACTIONS === "1";
const transport = new StdioClientTransport({
  command: process.env.PODVISOR_BIN,
  args: ["mcp", "--control", process.env.PODVISOR_CONTROL],
  stderr: "inherit",
});
const client = new Client({ name: "podvisor-mcp-test", version: "1.0.0" });
let passed = 0;
let failed = 0;
async function check(name, fn) {
  try {
    await fn();
    passed++;
  } catch (e) {
    failed++;
    console.error(`FAIL ${name}: ${e.stack || e}`);
  }
}
const call = (name, args = {}) => client.callTool({ name, arguments: args });
const processes = async () => (await call("list_processes")).structuredContent.processes;

await client.connect(transport);
await check("initialize", async () => {
  assert.equal(client.getServerVersion().name, "podvisor");
  assert.ok(client.getServerCapabilities().tools);
  assert.ok(client.getServerCapabilities().resources);
});
await check("tools/list", async () => {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  assert.deepEqual(names, ["check_config", "list_processes", "read_logs", "read_shutdown_report",
    "read_timeline", "restart", "signal", "start", "stop"]);
  for (const t of tools) assert.equal(t.inputSchema.type, "object", t.name);
});
await check("list_processes", async () => {
  const res = await call("list_processes");
  assert.equal(res.isError, false);
  const web = res.structuredContent.processes.find((p) => p.name === "web");
  assert.equal(web.state, "running");
  assert.ok(web.pid > 0);
  assert.deepEqual(JSON.parse(res.content[0].text), res.structuredContent);
});
await check("read_logs", async () => {
  const res = await call("read_logs", { process: "web", lines: 2 });
  assert.equal(res.isError, false, JSON.stringify(res));
  const { lines, truncated } = res.structuredContent;
  assert.equal(lines.length, 2);
  assert.equal(truncated, true);
  assert.ok(lines.every((l) => l.process === "web" && l.line.startsWith("line ")), JSON.stringify(lines));
  const grep = (await call("read_logs", { grep: "^line 3$", since: "1h" })).structuredContent;
  assert.deepEqual(grep.lines, [{ process: "web", line: "line 3" }]);
  const bad = await call("read_logs", { grep: "(" });
  assert.equal(bad.isError, true);
});
await check("read_timeline", async () => {
  const res = await call("read_timeline");
  assert.ok(res.structuredContent.processes.some((p) => p.name === "web" && p.incarnations.length > 0));
});
await check("read_shutdown_report", async () => {
  const res = await call("read_shutdown_report");
  assert.equal(res.isError, false);
  assert.equal(res.structuredContent.shutdown, null);
});
await check("check_config", async () => {
  const ok = await call("check_config");
  assert.equal(ok.structuredContent.ok, true, JSON.stringify(ok));
  const bad = await call("check_config", { path: "/nonexistent/procs.yaml" });
  assert.equal(bad.structuredContent.ok, false);
  assert.ok(bad.structuredContent.errors[0].includes("/nonexistent/procs.yaml"));
});
await check("resources", async () => {
  const { resources } = await client.listResources();
  assert.deepEqual(resources.map((r) => r.uri).sort(), ["podvisor://config", "podvisor://status"]);
  const st = await client.readResource({ uri: "podvisor://status" });
  assert.ok(JSON.parse(st.contents[0].text).processes.length === 2);
  const cfg = await client.readResource({ uri: "podvisor://config" });
  assert.match(cfg.contents[0].text, /processes:/);
});
await check("actions", async () => {
  const before = (await processes()).find((p) => p.name === "web").pid;
  const res = await call("restart", { names: ["web"] });
  const sig = await call("signal", { name: "idle", signal: "HUP" });
  if (!actions) {
    assert.equal(res.isError, true);
    assert.match(res.content[0].text, /mcp: \{actions: true\}/);
    assert.equal(sig.isError, true);
    assert.equal((await processes()).find((p) => p.name === "web").pid, before);
    return;
  }
  assert.equal(res.isError, false, JSON.stringify(res));
  assert.equal(res.structuredContent.ok, true);
  assert.notEqual((await processes()).find((p) => p.name === "web").pid, before);
  assert.equal(sig.isError, false, JSON.stringify(sig));
  const stop = await call("stop", { names: ["idle"] });
  assert.equal(stop.structuredContent.ok, true, JSON.stringify(stop));
  assert.equal((await processes()).find((p) => p.name === "idle").state, "stopped");
  const start = await call("start", { names: ["idle"] });
  assert.equal(start.structuredContent.ok, true, JSON.stringify(start));
  const unknown = await call("stop", { names: ["nope"] });
  assert.equal(unknown.isError, true);
});
await check("unknown tool", async () => {
  await assert.rejects(call("no_such_tool"));
});
await client.close();
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
