// Loaded before the ipywidgets HTML manager on pages with saved widget views.
(function () {
  // 1. RequireJS finds the widget manager served by this site, so that the modules it defines
  //    (and the icon fonts they load relative to themselves) come from _static/offline/.
  var here = document.currentScript ? document.currentScript.src : document.baseURI;
  require.config({ paths: {
    "@jupyter-widgets/html-manager/dist": new URL("offline/html-manager", here).href } });

  // 2. The widgets typeset their labels through MathJax 2's MathJax.Hub.Queue; the book uses
  //    MathJax 3. Give every MathJax object (the configuration, then MathJax itself once it has
  //    loaded and replaced it) a Hub.Queue that forwards to MathJax 3's typesetPromise.
  function typeset(el) {
    var mj = window.MathJax;
    if (!el || !mj || !mj.startup || !mj.startup.promise) return;
    mj.startup.promise.then(function () { return mj.typesetPromise([el]); })
      .catch(function (err) { console.warn("MathJax typeset of a widget label failed", err); });
  }
  function withHub(mj) {
    if (mj && typeof mj === "object" && !mj.Hub) {
      mj.Hub = { Queue: function () {
        for (var i = 0; i < arguments.length; i++) {
          var cmd = arguments[i];
          if (Array.isArray(cmd) && cmd[0] === "Typeset") typeset(cmd[2]);
        }
      } };
    }
    return mj;
  }
  var current = withHub(window.MathJax);
  Object.defineProperty(window, "MathJax", {
    configurable: true,
    get: function () { return current; },
    set: function (value) { current = withHub(value); },
  });
})();
