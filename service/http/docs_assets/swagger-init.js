// Starts Swagger UI on the /schema page. A file rather than an inline script, so the page's
// Content-Security-Policy can allow scripts from this origin only; the spec's URL is on the page.
window.addEventListener("load", () => {
  const root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: root.dataset.specUrl,
    domNode: root,
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
  });
});
