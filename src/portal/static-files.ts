// The portal's stylesheet and its one small script, served from the portal itself (the CSP allows nothing else).

/** Mobile first: one column, readable type, large touch targets; wider screens get a centred column. */
export const PORTAL_CSS = `
*{box-sizing:border-box}
html{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;line-height:1.5;color:#1a1a1a;background:#f6f7f9}
body{margin:0}
header{display:flex;flex-wrap:wrap;align-items:center;justify-content:space-between;gap:.5rem 1rem;padding:.75rem 1rem;background:#12355b;color:#fff}
header a,header .link{color:#fff}
.brand{font-weight:700;text-decoration:none;font-size:1.1rem}
nav{display:flex;flex-wrap:wrap;gap:.25rem 1rem;align-items:center}
nav a{padding:.25rem 0}
main{max-width:44rem;margin:0 auto;padding:1rem}
h1{font-size:1.6rem;margin:.5rem 0 1rem}
h2{font-size:1.2rem;margin:1.5rem 0 .5rem}
a{color:#0b57d0}
form{margin:0 0 1rem}
form.inline{display:inline;margin:0}
.field{margin:0 0 1rem}
label{display:block;font-weight:600;margin-bottom:.25rem}
input[type=text],input[type=email],input[type=password]{width:100%;font:inherit;padding:.6rem;border:1px solid #6b7280;border-radius:.375rem;background:#fff}
input[aria-invalid=true]{border-color:#b3261e;border-width:2px}
.error{color:#b3261e;margin:.25rem 0 0;font-weight:600}
.hint{color:#4b5563;margin:0 0 .25rem;font-size:.95rem}
button,.button{display:inline-block;font:inherit;font-weight:600;padding:.6rem 1rem;border-radius:.375rem;border:1px solid #12355b;background:#12355b;color:#fff;cursor:pointer;text-decoration:none;min-height:44px}
button.secondary,.button.secondary{background:#fff;color:#12355b}
button.danger{background:#b3261e;border-color:#b3261e}
button.link{background:none;border:none;padding:0;min-height:0;text-decoration:underline;font-weight:400}
.notice{padding:.75rem 1rem;border-radius:.375rem;background:#e8f0fe;border:1px solid #0b57d0}
.notice.alert{background:#fdecea;border-color:#b3261e}
.key{list-style:none;padding:0;margin:0}
.key>li{background:#fff;border:1px solid #d1d5db;border-radius:.5rem;padding:.75rem 1rem;margin:0 0 .75rem}
.key h3{margin:0 0 .25rem;font-size:1.05rem;overflow-wrap:anywhere}
.key dl{display:grid;grid-template-columns:max-content 1fr;gap:.1rem .75rem;margin:.25rem 0 .5rem}
.key dt{color:#4b5563}.key dd{margin:0;overflow-wrap:anywhere}
.actions{display:flex;flex-wrap:wrap;gap:.5rem}
code,pre,input.secret{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre{background:#111827;color:#f9fafb;padding:.75rem;border-radius:.375rem;overflow-x:auto;white-space:pre-wrap;overflow-wrap:anywhere}
input.secret{width:100%;font-size:1rem;padding:.6rem;border:2px solid #12355b;border-radius:.375rem;background:#fff}
fieldset{border:1px solid #d1d5db;border-radius:.375rem;margin:0 0 1rem;padding:.5rem 1rem}
fieldset label{display:flex;gap:.5rem;align-items:center;font-weight:400;min-height:44px}
table{width:100%;border-collapse:collapse;font-size:.95rem}
th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #d1d5db;vertical-align:top;overflow-wrap:anywhere}th{overflow-wrap:normal}
.status-revoked,.status-suspended{color:#b3261e;font-weight:600}.status-active{color:#146c2e;font-weight:600}
.status-pending{color:#8a5300;font-weight:600}
.idle{color:#8a5300}
nav.spans{margin:0 0 1rem}nav.spans a{padding:.5rem .25rem}nav.spans a[aria-current=page]{font-weight:700;color:#1a1a1a;text-decoration:none}
.totals{display:grid;grid-template-columns:max-content 1fr;gap:.1rem .75rem;margin:0}.totals dt{color:#4b5563}.totals dd{margin:0}
.chart{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.25rem .5rem;margin:0 0 1rem}
.chart svg{display:block;grid-column:2;grid-row:1;background:#fff;border:1px solid #d1d5db}
.chart-scale{grid-column:1;grid-row:1;display:flex;flex-direction:column;justify-content:space-between;font-size:.85rem;color:#4b5563;text-align:right}
.chart-periods{grid-column:2;display:flex;justify-content:space-between;gap:.5rem;font-size:.85rem;color:#4b5563}
.chart figcaption{grid-column:1/3}
.legend{list-style:none;padding:0;margin:.25rem 0 0;display:flex;flex-wrap:wrap;gap:.25rem 1rem;font-size:.95rem}
.legend li{display:flex;align-items:center;gap:.35rem}
details{margin:0 0 1rem}summary{cursor:pointer;font-weight:600;padding:.65rem 0}.nowrap{white-space:nowrap}
table.figures th,table.figures td{padding:.3rem .25rem}table.figures td{text-align:right;font-variant-numeric:tabular-nums}table.figures th[scope=row]{font-weight:400}
caption{text-align:left}
.skip{position:absolute;left:-999rem;top:.5rem;z-index:10;padding:.6rem 1rem;background:#fff;color:#12355b;font-weight:700;border-radius:.375rem}
.skip:focus{left:.5rem}
:focus-visible{outline:3px solid #ffbf47;outline-offset:2px;box-shadow:0 0 0 5px #1a1a1a}
main:focus{outline:none;box-shadow:none}
.error-summary{border:3px solid #b3261e;border-radius:.375rem;padding:.75rem 1rem;margin:0 0 1rem;background:#fff}
.error-summary:focus{outline:3px solid #ffbf47;outline-offset:2px}
.error-summary h2{margin:0 0 .5rem;font-size:1.1rem}.error-summary ul{margin:0;padding-left:1.25rem}
.error-summary a{color:#b3261e;font-weight:600}
.key h2{margin:0 0 .25rem;font-size:1.05rem;overflow-wrap:anywhere}
table.audit th,table.audit td{padding:.35rem .3rem;overflow-wrap:normal}
table.audit .detail,table.audit td.who{overflow-wrap:anywhere}
.snippets pre{margin:.5rem 0}
.key-use,code.route{display:block;font-size:.85rem;color:#4b5563}
`;

/**
 * The copy buttons: shown only when this runs (without script, the key is in a read-only field to select). A form's
 * error summary takes the focus, and its links focus their fields.
 */
export const PORTAL_JS = `
const summary = document.querySelector("[data-focus]");
if (summary) summary.focus();
for (const link of document.querySelectorAll("a[data-field]")) {
  link.addEventListener("click", (event) => {
    const input = document.getElementById(link.dataset.field);
    if (!input) return;
    event.preventDefault();
    input.focus();
    input.scrollIntoView({ block: "center" });
  });
}
for (const button of document.querySelectorAll("button[data-copy]")) {
  button.hidden = false;
  button.addEventListener("click", () => {
    const source = document.getElementById(button.dataset.copy);
    const text = source.value !== undefined ? source.value : source.textContent;
    navigator.clipboard.writeText(text).then(
      () => { button.textContent = "Copied"; },
      () => { source.select && source.select(); button.textContent = "Press Ctrl+C to copy"; },
    );
  });
}
`;
