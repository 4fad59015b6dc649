// The editor helpers of this package, shared by its seven node types and its sidebar. Node-RED serves
// this file from the package's resources/ folder; the first of the package's editor files to load fetches
// it (each file asks only when window.KaleyraEditor is not there yet), so it runs once, before any node
// type registers. Only functions and the rules: nothing here holds UI text (each node's strings are in
// its catalog).
//
// This is the source: the build (scripts/build-editor.js) writes it to resources/kaleyra-editor.js with
// RULES filled in from src/core (src/nodes/editor-rules.ts), the ranges, defaults, base URLs, the phone
// rule and the callback variables the runtime uses.
window.KaleyraEditor = (function (RULES) {
    "use strict";

    // A pattern of the rules, rebuilt.
    function re(p) { return new RegExp(p.source, p.flags); }

    // TypedInput type lists.
    var TYPES = {
        text: ["msg", "flow", "global", "env", "str", "jsonata"],
        list: ["msg", "flow", "global", "env", "str", "json", "jsonata"],
        count: ["msg", "flow", "global", "env", "num", "jsonata"]
    };
    // The types whose value is written in the dialog (a literal), so it can be checked there.
    var LITERAL = { str: true, num: true, json: true };
    var LISTENERS = ["kaleyra-callback", "kaleyra-vmn-in"];
    // Letters, digits and - . _ ~ between slashes: characters Express routes take literally.
    var PATH_RE = /^\/[A-Za-z0-9._~\-\/]*$/;

    function isBlank(v) {
        return v === undefined || v === null || String(v).trim() === "";
    }

    // t(key, subs): a text of one node type's catalog ("<type>.<key>").
    function i18n(type) {
        return function (key, subs) {
            var def = RED.nodes.getType(type);
            var full = type + "." + key;
            return def && def._ ? def._(full, subs) : full;
        };
    }

    // Whether node's edit dialog is open. Only then do the dialog's fields hold its values: a validator
    // that runs for another node (a config node's users, say) must read that node's properties instead.
    function editing(node) {
        if (!node) { return false; }
        if (RED.editor && typeof RED.editor.getEditStack === "function") {
            return RED.editor.getEditStack().indexOf(node) >= 0;
        }
        return true;
    }

    // A field of node's open edit dialog (prefix "node-input" by default), or null.
    function field(node, name, prefix) {
        if (!editing(node)) { return null; }
        var f = $("#" + (prefix || "node-input") + "-" + name);
        return f.length ? f : null;
    }

    // The TypedInput type of a property: the open dialog's type field, else the node's.
    function typeOf(node, prop, dflt) {
        var f = field(node, prop + "Type");
        return (f && f.val()) || node[prop + "Type"] || dflt;
    }

    // ---- Checks of literal values: each returns true, or an error key of the node's catalog (or
    // [key, substitutions]). They follow what the runtime accepts (src/core/validate.ts). ----

    function text(v) {
        return String(v === undefined || v === null ? "" : v).trim();
    }
    function isNumberItem(x) {
        return typeof x === "string" || (typeof x === "number" && Number.isSafeInteger(x) && x >= 0);
    }
    var PHONE_FORMATTING = re(RULES.phone.formatting);
    var NUMBER_RUN = re(RULES.phone.run);

    // A text with its phone numbers masked to their last 4 digits, as the runtime masks them (core/monitor.ts).
    function maskNumbers(value) {
        return String(value === undefined || value === null ? "" : value).replace(NUMBER_RUN, function (run) {
            var digits = run.replace(/\D/g, "");
            return digits.length >= RULES.phone.minDigits ? "***" + digits.slice(-4) : run;
        });
    }
    var PHONE_NUMBER = re(RULES.phone.number);
    var checks = {
        // A phone number with country code (the runtime's rule): formatting taken out, then the number.
        phone: function (v) {
            return PHONE_NUMBER.test(text(v).replace(PHONE_FORMATTING, "")) ? true : "errors.phone";
        },
        // Phone numbers: an array, or a string separated by commas, semicolons or line breaks.
        phones: function (v) {
            var list = Array.isArray(v) ? v : (typeof v === "number" ? [v] : String(v).split(/[,;\r\n]+/).filter(function (x) { return x.trim() !== ""; }));
            if (list.length === 0 || list.length > RULES.phone.listMax) { return "errors.phones"; }
            for (var i = 0; i < list.length; i++) {
                if (!isNumberItem(list[i]) || checks.phone(list[i]) !== true) { return "errors.phones"; }
            }
            return true;
        },
        // A Redis URL: redis:// or rediss:// (TLS), a host, an optional database number (as the runtime reads it).
        redisUrl: function (v) {
            var s = text(v);
            var u;
            try { u = new URL(s); } catch (e) { return "errors.redisUrl"; }
            return ((u.protocol === "redis:" || u.protocol === "rediss:") && u.hostname && /^(\/\d{0,2})?$/.test(u.pathname)) ? true : "errors.redisUrl";
        },
        // An http(s) URL.
        url: function (v) {
            var s = text(v);
            var u;
            try { u = new URL(s); } catch (e) { return "errors.url"; }
            return ((u.protocol === "http:" || u.protocol === "https:") && u.host && !/\s/.test(s) && s.length <= 2048) ? true : "errors.url";
        },
        // A whole number from min to max.
        integer: function (v, min, max) {
            var s = text(v);
            return (/^[0-9]+$/.test(s) && Number(s) >= min && Number(s) <= max) ? true : ["errors.integer", { min: min, max: max }];
        },
        // A number (fractions allowed) from min to max.
        number: function (v, min, max) {
            var s = text(v);
            return (/^[0-9]+(\.[0-9]+)?$/.test(s) && Number(s) >= min && Number(s) <= max) ? true : ["errors.number", { min: min, max: max }];
        },
        // Text matching a pattern; the error key is given.
        pattern: function (v, re, key) {
            return re.test(text(v)) ? true : key;
        },
        // Text of at most max characters.
        length: function (v, max) {
            return Array.from(text(v)).length <= max ? true : ["errors.length", { max: max }];
        }
    };

    // Runs a check given as a function or as [name of a check above, arguments...]; returns true or a
    // translated error text.
    function runCheck(t, check, value, kind) {
        var res;
        if (typeof check === "function") {
            res = check(value, kind);
        } else {
            var spec = Array.isArray(check) ? check : [check];
            res = checks[spec[0]].apply(null, [value].concat(spec.slice(1)));
        }
        if (res === true) { return true; }
        return Array.isArray(res) ? t(res[0], res[1]) : t(res);
    }

    // Validates a TypedInput property of an open dialog or a node. An empty value is valid: the message
    // fills it. A literal value (str, num, json) must pass check.
    function validateTyped(node, type, prop, dflt, check, v) {
        if (v === undefined || v === null || v === "") { return true; }
        var t = i18n(type);
        var label = t("label." + prop) + ": ";
        var kind = typeOf(node, prop, dflt);
        if (RED.utils.validateTypedProperty) {
            var res = RED.utils.validateTypedProperty(String(v), kind, {});
            if (res !== true) { return label + res; }
        }
        var value = v;
        if (kind === "json") {
            try { value = JSON.parse(v); } catch (e) { return label + t("errors.json"); }
        }
        if (check && LITERAL[kind]) {
            var ok = runCheck(t, check, value, kind);
            if (ok !== true) { return label + ok; }
        }
        return true;
    }

    // Validates a plain (not TypedInput) value with a check; empty is valid unless required.
    function validatePlain(type, prop, check, v, required) {
        var t = i18n(type);
        if (isBlank(v)) { return required ? t("label." + prop) + ": " + t("errors.required") : true; }
        var ok = runCheck(t, check, v);
        return ok === true ? true : t("label." + prop) + ": " + ok;
    }

    // Turns the dialog's inputs into TypedInputs: defs = { prop: [types, default type] }.
    function typedInputs(defs) {
        Object.keys(defs).forEach(function (prop) {
            $("#node-input-" + prop).typedInput({
                default: defs[prop][1],
                typeField: "#node-input-" + prop + "Type",
                types: defs[prop][0]
            });
        });
    }

    function resizeTray() {
        if (RED.tray && RED.tray.resize) { RED.tray.resize(); }
    }

    // ---- "Report to": a send node (whatsapp, click to call) names a callback in node. ----

    function isDisabled(n) {
        var ws = RED.nodes.workspace && RED.nodes.workspace(n.z);
        return !!(n.d || (ws && ws.disabled));
    }

    // The kaleyra-callback nodes to report to. Nodes inside a subflow template are left out: their ids at
    // run time are not the ones in the editor.
    function callbackNodes() {
        var list = [];
        RED.nodes.eachNode(function (n) {
            if (n.type === "kaleyra-callback" && !(RED.nodes.subflow && RED.nodes.subflow(n.z))) {
                list.push(n);
            }
        });
        return list;
    }

    // The account (kaleyra-config node) of the open dialog, else the node's.
    function accountOf(node) {
        var f = field(node, "account");
        var id = (f && f.val()) || node.account;
        var account = id ? RED.nodes.node(id) : null;
        return account && account.type === "kaleyra-config" ? account : null;
    }

    function validateReportTo(node, type, v) {
        if (isBlank(v)) { return true; }
        var t = i18n(type);
        var label = t("label.reportTo") + ": ";
        var target = RED.nodes.node(v);
        if (!target || target.type !== "kaleyra-callback") { return label + t("errors.reportToMissing"); }
        if (isDisabled(target)) { return label + t("errors.reportToDisabled"); }
        var account = accountOf(node);
        if (account && !account.simulator && isBlank(account.publicUrl)) { return label + t("errors.publicUrl"); }
        return true;
    }

    // Fills the Report to select; while a node is chosen the Callback row is hidden and a tip shown.
    function prepareReportTo(node, type) {
        var t = i18n(type);
        var $report = $("#node-input-reportTo");
        $("<option>").val("").text(t("reportTo.none")).appendTo($report);
        var found = false;
        callbackNodes().forEach(function (n) {
            var ws = RED.nodes.workspace && RED.nodes.workspace(n.z);
            var label = n.name || n.path || n.id;
            if (ws && ws.label) { label += " [" + ws.label + "]"; }
            if (isDisabled(n)) { label += " " + t("reportTo.disabled"); }
            found = found || n.id === node.reportTo;
            $("<option>").val(n.id).text(label).appendTo($report);
        });
        if (node.reportTo && !found) {
            $("<option>").val(node.reportTo).text(t("reportTo.missing")).appendTo($report);
        }
        $report.val(node.reportTo || "");
        $report.on("change", function () {
            var on = !!$report.val();
            $("." + type + "-callback-row").toggle(!on);
            $("." + type + "-report-tip").toggle(on);
            resizeTray();
        });
        $report.trigger("change");
    }

    // ---- Listeners (callback in, vmn in): a path on Node-RED's HTTP server and a token. ----

    // The accounts of the whatsapp and click to call nodes that report to callback-in node `node`.
    function reportingAccounts(node) {
        var ids = [];
        RED.nodes.eachNode(function (n) {
            if (n.reportTo === node.id && n.account && ids.indexOf(n.account) < 0) { ids.push(n.account); }
        });
        return ids;
    }

    // A callback-in node that nodes report to needs their account (it keeps their records).
    function checkListenerAccount(node, v) {
        var accounts = reportingAccounts(node);
        if (accounts.length === 0 || (!isBlank(v) && accounts.length === 1 && accounts[0] === v)) { return true; }
        var names = accounts.map(function (id) {
            var a = RED.nodes.node(id);
            return a ? (a.name || (a.simulator ? "simulator" : id)) : id;
        }).join(", ");
        return i18n("kaleyra-callback")("label.account") + ": " + i18n("kaleyra-callback")("errors.account", { account: names });
    }

    function checkPath(type, v) {
        var t = i18n(type);
        var s = text(v);
        if (!s) { return t("label.path") + ": " + t("errors.required"); }
        if (!PATH_RE.test(s) || /\/\//.test(s) || /\/\.\.?(\/|$)/.test(s)) {
            return t("label.path") + ": " + t("errors.path");
        }
        return true;
    }

    // As the runtime: one leading slash, no trailing one.
    function routePath(p) {
        var s = text(p);
        return ("/" + s.replace(/^\/+/, "")).replace(/\/+$/, "") || "/";
    }

    function nodeRoot() {
        var root = RED.settings.httpNodeRoot;
        return String(root === undefined || root === null || root === false ? "/" : root).replace(/\/+$/, "");
    }

    // 32 hex characters from the browser's cryptographic random source.
    function newToken() {
        var bytes = new Uint8Array(16);
        window.crypto.getRandomValues(bytes);
        var hex = "";
        for (var i = 0; i < bytes.length; i++) {
            hex += (bytes[i] < 16 ? "0" : "") + bytes[i].toString(16);
        }
        return hex;
    }

    // The public base URLs the accounts declare, then this editor's own address.
    function baseChoices(t) {
        var seen = {};
        var list = [];
        RED.nodes.eachConfig(function (c) {
            if (c.type !== "kaleyra-config") { return; }
            var url = text(c.publicUrl).replace(/\/+$/, "");
            if (url && !seen[url]) {
                seen[url] = true;
                list.push({ value: url, label: (c.name || t("defaultAccount")) + ": " + url, account: true });
            }
        });
        var here = window.location.protocol + "//" + window.location.host;
        if (!seen[here]) {
            list.push({ value: here, label: t("label.editorAddress") + ": " + here, account: false });
        }
        return list;
    }

    // Other enabled nodes that listen on the same route (this package's listeners, http in with GET/POST).
    function clashes(self, path) {
        var route = routePath(path);
        var found = [];
        RED.nodes.eachNode(function (n) {
            if (n.id === self.id || n.d) { return; }
            if (LISTENERS.indexOf(n.type) >= 0 && routePath(n.path) === route) {
                found.push(n.name || routePath(n.path));
            } else if (n.type === "http in" && (n.method === "get" || n.method === "post") && routePath(n.url) === route) {
                found.push(n.name || ("[" + n.method + "] " + route));
            }
        });
        return found;
    }

    // The listener dialog: a token for a new node, the regenerate and copy buttons, the base URL select,
    // and the tips. render(url, query) shows the URL(s) for the path with the token's query ("" if none).
    function prepareListener(node, type, render) {
        var t = i18n(type);
        var $path = $("#node-input-path");
        var $token = $("#node-input-token");
        var $base = $("#" + type + "-base");

        // A new node, a copy or an imported node (credentials are neither copied nor exported) gets a
        // token of its own, unless the user chose to accept requests without one.
        if (isBlank($token.val()) && !node.acceptWithoutToken) {
            $token.val(newToken());
        }
        var $open = $("#node-input-acceptWithoutToken");
        $("#" + type + "-regenerate")
            .attr("title", t("tip.regenerate"))
            .on("click", function () {
                $token.val(newToken()).trigger("change");
            });

        var choices = baseChoices(t);
        choices.forEach(function (b) {
            $("<option>").val(b.value).text(b.label).appendTo($base);
        });
        var hasAccountBase = choices.some(function (b) { return b.account; });

        function update() {
            var token = text($token.val());
            var query = token ? new URLSearchParams({ token: token }).toString() : "";
            render($base.val() + nodeRoot() + routePath($path.val()), query);
            $("." + type + "-notoken").toggle(!token);
            // Only a listener without a token may accept requests without one.
            $("." + type + "-open-row").toggle(!token || $open.prop("checked"));
            $("." + type + "-nobase").toggle(!hasAccountBase);
            var other = checkPath(type, $path.val()) === true ? clashes(node, $path.val()) : [];
            $("." + type + "-clash")
                .text(other.length ? t("tip.clash") + other.join(", ") : "")
                .toggle(other.length > 0);
        }
        $path.on("change keyup input", update);
        $token.on("change keyup input", update);
        $open.on("change", update);
        $base.on("change", update);

        $("." + type + "-copy")
            .attr("title", t("tip.copy"))
            .on("click", function () {
                var value = $($(this).attr("data-target")).text();
                if (RED.clipboard && RED.clipboard.copyText) {
                    RED.clipboard.copyText(value, $(this), "clipboard.copyMessageValue");
                }
            });
        update();
    }

    return {
        rules: RULES,
        re: re,
        TYPES: TYPES,
        maskNumbers: maskNumbers,
        checks: checks,
        isBlank: isBlank,
        i18n: i18n,
        editing: editing,
        field: field,
        typeOf: typeOf,
        validateTyped: validateTyped,
        validatePlain: validatePlain,
        typedInputs: typedInputs,
        resizeTray: resizeTray,
        validateReportTo: validateReportTo,
        prepareReportTo: prepareReportTo,
        checkPath: checkPath,
        checkListenerAccount: checkListenerAccount,
        reportingAccounts: reportingAccounts,
        routePath: routePath,
        prepareListener: prepareListener
    };
})(/* RULES */ null);
