vcl 4.1;
# Varnish in front of the flash-sale API, with the README's cache-key policy ("Behind a CDN"):
# - the key is the full URL with its query parameters sorted; `apikey` stays in it, so a request with a missing,
#   invalid or revoked key is never answered with a copy fetched with a valid one;
# - Accept-Encoding is normalised to br, gzip or identity (the API sends `Vary: Accept-Encoding`);
# - freshness is the API's own `max-age`, which never runs past the instant a response changes: no grace, no keep,
#   no stale serving of any kind;
# - only 200s, and 404s the API marks `public` (a sale that has ended, a product between sales), are cached; every
#   other error (401, 429, 400, 5xx: `no-store`) goes to the API every time.
# Start varnishd with `-p http_gzip_support=off`: with it on, Varnish rewrites Accept-Encoding to gzip on its way to
# the API, and brotli would never be asked for.
#
# A revoked key can be answered from the cache for at most max-age (MAX_AGE, 300 s by default) after the
# fetch of each. To cut that short, ban its URLs when revoking it:
#   varnishadm ban 'req.url ~ "[?&]apikey=<the key>(&|$)"'

import std;

backend api {
    .host = "127.0.0.1";
    .port = "8080";
}

sub vcl_recv {
    if (req.method != "GET" && req.method != "HEAD") {
        return (pass);
    }
    set req.url = std.querysort(req.url);
    if (req.http.Accept-Encoding ~ "(^|,)\s*br\s*(;\s*q=(1|0?\.0*[1-9]))?\s*(,|$)") {
        set req.http.Accept-Encoding = "br";
    } elsif (req.http.Accept-Encoding ~ "(^|,)\s*(x-)?gzip\s*(;\s*q=(1|0?\.0*[1-9]))?\s*(,|$)") {
        set req.http.Accept-Encoding = "gzip";
    } else {
        unset req.http.Accept-Encoding;
    }
    # The API's answers do not depend on cookies or credentials other than the key in the URL.
    unset req.http.Cookie;
    unset req.http.Authorization;
    return (hash);
}

sub vcl_hash {
    hash_data(req.url);
    return (lookup);
}

sub vcl_backend_response {
    set beresp.grace = 0s;
    set beresp.keep = 0s;
    if (beresp.status != 200 && !(beresp.status == 404 && beresp.http.Cache-Control ~ "(^|,)\s*public")) {
        set beresp.uncacheable = true;
        set beresp.ttl = 0s;
        return (deliver);
    }
    if (beresp.http.Cache-Control ~ "no-store|private") {
        set beresp.uncacheable = true;
        set beresp.ttl = 0s;
    }
    return (deliver);
}

sub vcl_deliver {
    if (obj.hits > 0) {
        set resp.http.X-Cache = "HIT";
    } else {
        set resp.http.X-Cache = "MISS";
    }
    return (deliver);
}
