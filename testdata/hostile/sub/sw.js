const out = new URL(self.location.href).searchParams.get("o");
self.addEventListener("install", (e) => { e.waitUntil(fetch(out + "/from-service-worker", {mode: "no-cors"}).catch(() => {})); });
self.addEventListener("activate", () => { fetch(out + "/sw-activate", {mode: "no-cors"}).catch(() => {}); });
