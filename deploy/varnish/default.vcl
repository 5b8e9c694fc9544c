vcl 4.1;
# Varnish in front of the flash-sale API, keys checked at the edge, so that one cached copy of a resource serves every
# key (docs/deploy.md). Needs Debian's `varnish-modules` (vsthrottle, for the rate limits), and the API run
# with TRUST_PROXY naming this Varnish (`loopback` on the same machine): it answers the key check to its proxies only.
# Start varnishd with `-p http_gzip_support=off`: with it on, Varnish rewrites Accept-Encoding to gzip on its way to
# the API, and brotli would never be asked for.
#
# A GET or HEAD under /v1/ goes through three steps (the request is restarted between them):
# 1. its key parameters (see vcl_recv) and its header's key (X-Api-Key, or Authorization: Bearer) become a request
#    for the API's GET /edge/key, looked up in the cache like any object, hashed by those keys alone: the API's
#    answer (204, with the key's name and limits; or its 401) is
#    kept for the time it says: EDGE_KEY_HOLD (an hour by default) when the API pushes key changes here (EDGE_FRONTS
#    names this Varnish `varnish`, the name it gives in `X-Edge-Front`), EDGE_KEY_TTL (2 s) otherwise. A push bans
#    a changed key's checks by their X-Key-Hash (the `BAN` method below, from the API's address only: set it in the
#    acl), so a revoked key is refused here within 2 s either way;
# 2. the key's rate is applied with its own rate and burst (vsthrottle: a bucket of `burst` tokens refilled at `rate`
#    a second, as the API's), answering the API's own 429 with Retry-After;
# 3. the resource is looked up by its URL with the query sorted and its `apikey` parameter left out (nothing else of
#    the client's is in the key), with Accept-Encoding normalised to br, gzip or identity (the API sends `Vary:
#    Accept-Encoding, Authorization, X-Api-Key`: a copy is kept varying with the encoding alone, the key being checked
#    in step 1, and the API's Vary is sent with it, so that a cache behind this one keeps header-keyed answers
#    apart). `affid`, `callback` and every other parameter stay in it. Freshness is the API's own max-age
#    (never past the instant a response changes): no grace, no keep, no stale serving of any kind. Only 200s, and 404s
#    the API marks `public` (a sale that has ended, a product between sales), are cached.
# A refused key gets the check's cached 401 (a flood of one wrong key costs the API one check per EDGE_KEY_TTL); a
# JSONP request (a `callback` parameter) gets the API's own answer, since the API renders errors as a call. What the
# check cannot answer (a malformed query: the API's 400; the API down) and every other method go to the API as they
# are. A wrong key counts against the client's address at the API (the failed-key lockout) when the check asks about
# it, once per key and EDGE_KEY_TTL; the lockout's own 401 is never cached.
# GET /v1/events (a stream: passed, streamed, long timeouts) and /v1/usage.json (a key's own figures) pass through to
# the API, their key checked there. Paths outside /v1/ and the OpenAPI document need no key: cached by their full URL.
# /edge/key, spelt any way the API would read it, is the API's answer to a stranger (404), never the check itself.
#
# The front owns these response headers: RateLimit-Limit, -Remaining and -Reset (from this Varnish's bucket of the
# key; the API's are per key and removed from what is cached), Cache-Control on a refusal (`no-store`, as the API
# sends it), X-Cache (HIT or MISS), Age, Via, X-Varnish, Date, Server and Connection.
#
# Logs: the key's name is logged with std.log as `key:<name>` (never the key), so that
# `varnishncsa -F '%h %t "%m %U" %s %b %{Varnish:hitmiss}x %{VCL_Log:key}x'` prints it on each line, hits included
# (%U is the path alone: %r and %q would print the query, key included).

import std;
import vsthrottle;

# Who may ban: the API (its pushes, src/edge/varnish.ts). 127.0.0.1 for an API on this machine.
acl flash_sale_api_pushes {
    "127.0.0.1";
    "::1";
}

backend api {
    .host = "127.0.0.1";
    .port = "8080";
}

sub vcl_recv {
    if (req.method == "BAN") {
        call flash_sale_ban;
    }
    if (req.restarts == 0) {
        # The steps below speak through these headers: none may come from a client.
        unset req.http.X-Flash-Sale-Step;
        unset req.http.X-Flash-Sale-Url;
        unset req.http.X-Flash-Sale-Key-Name;
        unset req.http.X-Flash-Sale-Key-Rate;
        unset req.http.X-Flash-Sale-Key-Burst;
        if (req.http.Accept-Encoding ~ "(^|,)\s*br\s*(;\s*q=(1|0?\.0*[1-9]))?\s*(,|$)") {
            set req.http.Accept-Encoding = "br";
        } elsif (req.http.Accept-Encoding ~ "(^|,)\s*(x-)?gzip\s*(;\s*q=(1|0?\.0*[1-9]))?\s*(,|$)") {
            set req.http.Accept-Encoding = "gzip";
        } else {
            unset req.http.Accept-Encoding;
        }
        # The API's answers do not depend on cookies. Authorization and X-Api-Key go to the API as they came (a key
        # may be in them); a repeated X-Api-Key is one value, as the API reads it (and refuses it).
        unset req.http.Cookie;
        std.collect(req.http.X-Api-Key);
    }
    if (req.http.X-Flash-Sale-Step == "origin") {
        # The check could not answer (or the answer is the API's to render): the API answers the request itself.
        return (pass);
    }
    if (req.http.X-Flash-Sale-Step == "checked") {
        call flash_sale_limit;
        return (hash);
    }
    if (req.method != "GET" && req.method != "HEAD") {
        return (pass);
    }
    # The API decodes the path and merges runs of slashes: any spelling of /edge/key is the check. To a client it is
    # what the API answers a stranger.
    if (req.url ~ "^(?i:https?://[^/?#]*)?/+(e|%65)(d|%64)(g|%67)(e|%65)/+(k|%6[Bb])(e|%65)(y|%79)([?#]|$)") {
        set req.url = regsub(req.url, "^[^?#]*", "/edge/");
        return (pass);
    }
    set req.url = std.querysort(req.url);
    if (req.url ~ "^/v1/(events|usage\.json)(\?|$)") {
        if (req.url ~ "^/v1/events") {
            # A stream: sent for as long as the client stays (send_timeout, 10 min by default, would end it).
            set sess.send_timeout = 1h;
        }
        return (pass);
    }
    if (req.url !~ "^/v1/" || req.url ~ "^/v1/openapi\.json(\?|$)") {
        return (hash);
    }
    # Step 1: the key check. A parameter the API takes for `apikey` is one whose name decodes to it exactly (each
    # letter as it is or percent-encoded), followed by `=`, `&` or the end; the check is asked about every such
    # parameter, from the first to the last (the API refuses a key given twice).
    set req.http.X-Flash-Sale-Url = req.url;
    set req.http.X-Flash-Sale-Step = "check";
    if (req.url ~ "\?(.*&)?(a|%61)(p|%70)(i|%69)(k|%6[Bb])(e|%65)(y|%79)(=[^&]*)?(&|$)") {
        set req.url = "/edge/key?" + regsub(req.url,
            "^[^?]*\?(?:.*?&)??((?:a|%61)(?:p|%70)(?:i|%69)(?:k|%6[Bb])(?:e|%65)(?:y|%79)(?:=[^&]*)?(?:&(?:.*&)?(?:a|%61)(?:p|%70)(?:i|%69)(?:k|%6[Bb])(?:e|%65)(?:y|%79)(?:=[^&]*)?)?)(?=&|$).*$",
            "\1");
    } else {
        set req.url = "/edge/key?";
    }
    # A key in a header, in the check's query as the API reads it there: as sent when it is letters and digits (a
    # key's alphabet), `-` otherwise (the API refuses it as malformed, as it would the header itself). The check's
    # URL, by which its answer is hashed, holds every key the request presents.
    if (req.http.X-Api-Key) {
        if (req.http.X-Api-Key ~ "^[A-Za-z0-9]+$") {
            set req.url = req.url + "&x_api_key=" + req.http.X-Api-Key;
        } else {
            set req.url = req.url + "&x_api_key=-";
        }
    }
    if (req.http.Authorization ~ "(?i)^bearer +[A-Za-z0-9]+ *$") {
        set req.url = req.url + "&authorization=Bearer%20" + regsub(req.http.Authorization, "(?i)^bearer +([A-Za-z0-9]+) *$", "\1");
    } elsif (req.http.Authorization ~ "(?i)^bearer ") {
        set req.url = req.url + "&authorization=Bearer%20-";
    } elsif (req.http.Authorization) {
        # Another scheme (a proxy's Basic credentials): not a key, as the API reads it.
        set req.url = req.url + "&authorization=-";
    }
    set req.url = regsub(regsub(req.url, "^/edge/key\?&", "/edge/key?"), "\?$", "");
    return (hash);
}

# A push from the API: the checks of the keys whose hashes it names (`X-Flash-Sale-Ban: <hex>|<hex>...`), or every
# check (`all`: a resync), banned by their X-Key-Hash (lurker-friendly: the ban reads the object alone).
sub flash_sale_ban {
    if (client.ip !~ flash_sale_api_pushes) {
        return (synth(403));
    }
    if (req.http.X-Flash-Sale-Ban == "all") {
        ban("obj.http.X-Key-Hash ~ .");
    } elsif (req.http.X-Flash-Sale-Ban ~ "^[0-9a-f]{64}(\|[0-9a-f]{64})*$") {
        ban("obj.http.X-Key-Hash ~ ^(" + req.http.X-Flash-Sale-Ban + ")$");
    } else {
        return (synth(400));
    }
    return (synth(200, "Banned"));
}

# Step 2: the key's own rate, from the check: a bucket of `burst` tokens refilled at `rate` a second.
sub flash_sale_limit {
    std.log("key:" + req.http.X-Flash-Sale-Key-Name);
    set req.http.X-Flash-Sale-Period = std.real(req.http.X-Flash-Sale-Key-Burst, 1) / std.real(req.http.X-Flash-Sale-Key-Rate, 1);
    if (vsthrottle.is_denied(req.http.X-Flash-Sale-Key-Name,
            std.integer(req.http.X-Flash-Sale-Key-Burst, 1),
            std.duration(real = std.real(req.http.X-Flash-Sale-Period, 1)))) {
        return (synth(429));
    }
}

sub vcl_hash {
    if (req.http.X-Flash-Sale-Step == "checked") {
        # Step 3: every key shares the entry (the key parameter left out, and no `&` or `?` left dangling where it
        # was, so that a request with its key in a header, no parameter at all, shares it too).
        # (One parameter left out: a request with two goes to the API, which refuses it.)
        if (req.url ~ "[?&](?:a|%61)(?:p|%70)(?:i|%69)(?:k|%6[Bb])(?:e|%65)(?:y|%79)(?:=[^&]*)?&") {
            hash_data(regsub(req.url, "([?&])(?:a|%61)(?:p|%70)(?:i|%69)(?:k|%6[Bb])(?:e|%65)(?:y|%79)(?:=[^&]*)?&", "\1"));
        } else {
            hash_data(regsub(req.url, "[?&](?:a|%61)(?:p|%70)(?:i|%69)(?:k|%6[Bb])(?:e|%65)(?:y|%79)(?:=[^&]*)?$", ""));
        }
    } else {
        hash_data(req.url);
    }
    return (lookup);
}

sub vcl_backend_fetch {
    unset bereq.http.X-Flash-Sale-Step;
    unset bereq.http.X-Flash-Sale-Url;
    unset bereq.http.X-Flash-Sale-Key-Name;
    unset bereq.http.X-Flash-Sale-Key-Rate;
    unset bereq.http.X-Flash-Sale-Key-Burst;
    unset bereq.http.X-Flash-Sale-Period;
    unset bereq.http.X-Edge-Front;
    if (bereq.url ~ "^/edge/key(\?|$)") {
        # This front's name in EDGE_FRONTS: the API holds its answer for EDGE_KEY_HOLD while its pushes reach here.
        set bereq.http.X-Edge-Front = "varnish";
    }
    if (bereq.url ~ "^/v1/events(\?|$)") {
        # A stream: a comment every 15 s at least, for as long as the client stays.
        set bereq.between_bytes_timeout = 1h;
    }
    return (fetch);
}

sub vcl_backend_response {
    set beresp.grace = 0s;
    set beresp.keep = 0s;
    if (bereq.url ~ "^/edge/key(\?|$)") {
        # The check's answer, for the time the API says; a lockout (no-store) is that address's alone: not kept.
        if ((beresp.status == 204 || beresp.status == 401) && beresp.http.Cache-Control ~ "^public, max-age=[0-9]+$") {
            set beresp.ttl = std.duration(regsub(beresp.http.Cache-Control, "^.*=", "") + "s", 0s);
        } else {
            set beresp.uncacheable = true;
            set beresp.ttl = 0s;
        }
        return (deliver);
    }
    if (!bereq.uncacheable) {
        # Per key, so never in a shared copy: this Varnish sends the key's own from its bucket (vcl_deliver). What is
        # passed (the stream, a key's usage, what the API answers itself) keeps the API's.
        unset beresp.http.RateLimit-Limit;
        unset beresp.http.RateLimit-Remaining;
        unset beresp.http.RateLimit-Reset;
    }
    if (beresp.status != 200 && !(beresp.status == 404 && beresp.http.Cache-Control ~ "(^|,)\s*public")) {
        set beresp.uncacheable = true;
        set beresp.ttl = 0s;
        return (deliver);
    }
    if (beresp.http.Cache-Control ~ "no-store|private") {
        set beresp.uncacheable = true;
        set beresp.ttl = 0s;
    }
    if (beresp.http.Vary ~ "(?i)authorization|x-api-key") {
        # One copy for every key (checked in step 1): kept varying with the encoding alone; the API's Vary is sent.
        set beresp.http.X-Flash-Sale-Vary = beresp.http.Vary;
        if (beresp.http.Vary ~ "(?i)accept-encoding") {
            set beresp.http.Vary = "Accept-Encoding";
        } else {
            unset beresp.http.Vary;
        }
    }
    return (deliver);
}

sub vcl_deliver {
    if (req.http.X-Flash-Sale-Step == "check") {
        if (resp.status == 204) {
            # Allowed: on to the rate limit and the resource.
            set req.http.X-Flash-Sale-Key-Name = resp.http.X-Key-Name;
            set req.http.X-Flash-Sale-Key-Rate = resp.http.X-Key-Rate;
            set req.http.X-Flash-Sale-Key-Burst = resp.http.X-Key-Burst;
            set req.http.X-Flash-Sale-Step = "checked";
            set req.url = req.http.X-Flash-Sale-Url;
            return (restart);
        }
        if (resp.status != 401 || req.http.X-Flash-Sale-Url ~ "\?(.*&)?(c|%63)(a|%61)(l|%6[Cc])(l|%6[Cc])(b|%62)(a|%61)(c|%63)(k|%6[Bb])=") {
            set req.http.X-Flash-Sale-Step = "origin";
            set req.url = req.http.X-Flash-Sale-Url;
            return (restart);
        }
        # Refused: the API's 401 as the API sends it.
        set resp.http.Cache-Control = "no-store";
    }
    if (req.http.X-Flash-Sale-Step == "checked") {
        call flash_sale_ratelimit_headers;
    }
    # The check's hash (what a push bans by) is the cache's own.
    unset resp.http.X-Key-Hash;
    if (resp.http.X-Flash-Sale-Vary) {
        set resp.http.Vary = resp.http.X-Flash-Sale-Vary;
        unset resp.http.X-Flash-Sale-Vary;
    }
    if (obj.hits > 0) {
        set resp.http.X-Cache = "HIT";
    } else {
        set resp.http.X-Cache = "MISS";
    }
    return (deliver);
}

# RateLimit-* of the key's bucket here, as the API sends them: its size, the whole tokens left, and the seconds
# until it is full again.
sub flash_sale_ratelimit_headers {
    set resp.http.RateLimit-Limit = req.http.X-Flash-Sale-Key-Burst;
    set resp.http.RateLimit-Remaining = vsthrottle.remaining(req.http.X-Flash-Sale-Key-Name,
        std.integer(req.http.X-Flash-Sale-Key-Burst, 1), std.duration(real = std.real(req.http.X-Flash-Sale-Period, 1)));
    set resp.http.RateLimit-Reset = std.integer(real = std.round(0.499 +
        (std.real(req.http.X-Flash-Sale-Key-Burst, 1) - std.real(resp.http.RateLimit-Remaining, 0)) /
        std.real(req.http.X-Flash-Sale-Key-Rate, 1)), fallback = 0);
}

sub vcl_synth {
    if (resp.status == 429 && req.http.X-Flash-Sale-Step == "checked") {
        # The API's 429: the key's own limit, and the seconds until one token more (at least 1).
        if (std.real(req.http.X-Flash-Sale-Key-Rate, 1) >= 1) {
            set resp.http.Retry-After = "1";
        } else {
            set resp.http.Retry-After = std.integer(real = std.round(0.499 + 1 / std.real(req.http.X-Flash-Sale-Key-Rate, 1)), fallback = 1);
        }
        set resp.http.Cache-Control = "no-store";
        set resp.http.Access-Control-Allow-Origin = "*";
        set req.http.X-Flash-Sale-Problem = {"{"type":"urn:flash-sale-api:problem:rate_limited","title":"Too many requests","status":429,"detail":"this key may make "} +
            req.http.X-Flash-Sale-Key-Rate + " requests a second (bursts of " + req.http.X-Flash-Sale-Key-Burst +
            "); retry after " + resp.http.Retry-After + {" s","code":"rate_limited"} + {"""} + "}";
        # JSONP (a `callback` that is a JavaScript name, written without percent-escapes): the API's call, with
        # status 200 for suppress_response_codes=1.
        if (req.url ~ "\?(.*&)?callback=[A-Za-z_$][A-Za-z0-9_$.]{0,63}(&|$)") {
            set resp.http.Content-Type = "application/javascript; charset=utf-8";
            synthetic("/**/" + regsub(req.url, "^.*[?&]callback=([A-Za-z_$][A-Za-z0-9_$.]{0,63})(&.*)?$", "\1") +
                "(" + req.http.X-Flash-Sale-Problem + ");");
            if (req.url ~ "[?&]suppress_response_codes=1(&|$)") {
                set resp.status = 200;
                set resp.reason = "OK";
            }
        } else {
            set resp.http.Content-Type = "application/problem+json";
            synthetic(req.http.X-Flash-Sale-Problem);
        }
        call flash_sale_ratelimit_headers;
        return (deliver);
    }
}
