// The sign-in of a board off loopback, on the page that refused a reader without its token: once
// signed in (the token traded for the cookie), the page asked for is loaded again.
import { whenSignedIn } from './actions.js';

whenSignedIn(document.getElementById('sign-in-box'), () => {
  location.reload();
  return document.createTextNode('Signed in: loading the page…');
});
