// The bank's confirmation of a first charge (3-D Secure): Stripe.js shows the bank's page
// for the page's PaymentIntent, then the form posts and the server asks Stripe how it
// ended (templates/portal/subscribe_authenticate.html, templates/shop/authenticate.html,
// and a renewal's: templates/portal/confirm_payment.html).
// Loaded after Stripe.js.
(function () {
  "use strict";
  var form = document.getElementById("card-authenticate");
  if (!form || typeof Stripe === "undefined") { return; }
  var stripe = Stripe(form.dataset.publishableKey);
  var errorBox = document.getElementById("card-authenticate-error");
  var asked = false;
  form.addEventListener("submit", function (event) {
    if (asked) { return; }
    event.preventDefault();
    var button = form.querySelector("button[type=submit]");
    button.disabled = true;
    // A renewal Stripe left waiting for a payment method (off-session) is confirmed with
    // the card it was made with (templates/portal/confirm_payment.html names it).
    var data = form.dataset.paymentMethod ? {payment_method: form.dataset.paymentMethod} : undefined;
    stripe.confirmCardPayment(form.dataset.clientSecret, data).then(function (result) {
      if (result.error) {
        errorBox.textContent = result.error.message || String(result.error);
      }
      // Either way the server asks Stripe: a refused confirmation ends the subscription.
      asked = true;
      form.submit();
    });
  });
}());
