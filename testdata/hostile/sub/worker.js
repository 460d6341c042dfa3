const out = new URL(self.location.href).searchParams.get("o");
fetch(out + "/from-worker", {mode: "no-cors"}).catch(() => {});
try { new WebSocket(out.replace("http", "ws") + "/worker-ws"); } catch (e) {}
try { importScripts(out + "/import-scripts.js"); } catch (e) {}
