// gtp2ogs's HTTP helper puts "host:port" in the host name (util.ts request()), which only
// resolves when the port is 80 and absent from --server. Loaded with `node -r`, this lets the
// name lookup ignore the port so its challenge acceptance reaches the loopback stand-in.
const dns = require("dns");
const lookup = dns.lookup;
dns.lookup = function (host, ...rest) {
    return lookup.call(this, String(host).replace(/:\d+$/, ""), ...rest);
};
