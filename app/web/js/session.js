// Who is signed in: the account bar, and the sign-in / register / guest dialog.

import { api, getToken, onUnauthorized, request, setToken } from "./api.js";
import { h, mount, toast } from "./dom.js";

const listeners = new Set();

export const session = {
  user: null,

  /** Load the signed-in user from the stored token, if any. */
  async load() {
    if (!getToken()) return this.set(null);
    try {
      this.set(await api.get("/api/auth/me"));
    } catch {
      this.set(null); // a refused token is dropped by the API client
    }
  },

  set(user) {
    this.user = user;
    for (const listener of listeners) listener(user);
    return user;
  },

  /** Call `fn(user)` now and on every change; returns an unsubscribe function. */
  subscribe(fn) {
    listeners.add(fn);
    fn(this.user);
    return () => listeners.delete(fn);
  },

  async signIn(kind, name, password) {
    const path = {
      login: "/api/auth/login",
      register: "/api/auth/register",
      guest: "/api/auth/guest",
    }[kind];
    const data = await api.post(path, kind === "guest" ? {} : { name, password });
    setToken(data.access_token);
    return this.set(data.user);
  },

  async signOut() {
    // Forget the token first: the live socket reconnects as a spectator before the server,
    // revoking the token, closes the sockets opened with it (which would read as "signed out
    // by the server").
    const token = getToken();
    setToken(null);
    this.set(null);
    if (!token) return;
    try {
      await request("POST", "/api/auth/logout", {}, token);
    } catch {
      // The token is dropped locally either way.
    }
  },
};

onUnauthorized(() => session.user && session.set(null));

/** Make sure someone is signed in; opens the dialog and resolves with the user, or null. */
export function requireUser(reason) {
  if (session.user) return Promise.resolve(session.user);
  return openSignIn(reason);
}

/** What the server accepts (app/services/accounts.py), said before the user types. */
export const NAME_RULES =
  "3 to 20 characters: letters, digits, _ and -. Not starting with guest-; a few names (admin…) are kept for the site.";
export const PASSWORD_RULES =
  "At least 8 characters, at least 4 of them different, not a common password, and not containing your name.";
const NAME_PATTERN = /^[A-Za-z0-9_-]{3,20}$/;

/**
 * The sign-in dialog, with separate forms to sign in and to register (and a guest button).
 * Resolves with the user, or null when closed. `mode` picks the form shown first.
 */
export function openSignIn(reason = "", mode = "login") {
  return new Promise((resolve) => {
    let done = false;
    const finish = (user) => {
      if (done) return;
      done = true;
      dialog.close();
      dialog.remove();
      resolve(user);
    };
    const enter = async (kind, name, password, error) => {
      error.textContent = "";
      try {
        const user = await session.signIn(kind, name, password);
        toast(`Signed in as ${user.name}`);
        finish(user);
      } catch (err) {
        error.textContent = err.message;
      }
    };
    const guest = h("button", {
      type: "button",
      onClick: () => enter("guest", "", "", body.querySelector(".error-text")),
      text: "Play as a guest",
    });
    const cancel = h("button", { type: "button", onClick: () => finish(null), text: "Cancel" });

    function loginForm() {
      const error = h("p", { class: "error-text", role: "alert" });
      const name = h("input", {
        name: "name",
        autocomplete: "username",
        required: true,
        maxlength: "32",
      });
      const password = h("input", {
        name: "password",
        type: "password",
        autocomplete: "current-password",
        required: true,
      });
      const form = h(
        "form",
        {
          class: "signin-form",
          "aria-label": "Sign in",
          onSubmit: (event) => {
            event.preventDefault();
            if (!name.value.trim() || !password.value) {
              error.textContent = "Enter your name and your password.";
              return;
            }
            enter("login", name.value.trim(), password.value, error);
          },
        },
        h(
          "div",
          { class: "form-row" },
          h("label", {}, "Name", name),
          h("label", {}, "Password", password),
        ),
        error,
        h(
          "div",
          { class: "toolbar" },
          h("button", { type: "submit", class: "primary", text: "Log in" }),
          guest,
          cancel,
        ),
      );
      return [form, name];
    }

    function registerForm() {
      const error = h("p", { class: "error-text", role: "alert" });
      const name = h("input", {
        name: "name",
        autocomplete: "username",
        required: true,
        maxlength: "20",
        "aria-describedby": "name-rules",
      });
      const password = h("input", {
        name: "new-password",
        type: "password",
        autocomplete: "new-password",
        required: true,
        "aria-describedby": "password-rules",
      });
      const again = h("input", {
        name: "password-again",
        type: "password",
        autocomplete: "new-password",
        required: true,
      });
      const form = h(
        "form",
        {
          class: "register-form",
          "aria-label": "Register",
          onSubmit: (event) => {
            event.preventDefault();
            const chosen = name.value.trim();
            if (!NAME_PATTERN.test(chosen)) {
              error.textContent = `That name cannot be used. A name is ${NAME_RULES[0].toLowerCase()}${NAME_RULES.slice(1)}`;
              return;
            }
            if (password.value.length < 8) {
              error.textContent = "The password is too short: at least 8 characters.";
              return;
            }
            if (password.value !== again.value) {
              error.textContent = "The two passwords differ: type the same password twice.";
              return;
            }
            enter("register", chosen, password.value, error);
          },
        },
        h("label", {}, "Name", name),
        h("p", { class: "muted rules", id: "name-rules", text: NAME_RULES }),
        h("label", {}, "Password", password),
        h("p", { class: "muted rules", id: "password-rules", text: PASSWORD_RULES }),
        h("label", {}, "Password again", again),
        error,
        h(
          "div",
          { class: "toolbar" },
          h("button", { type: "submit", class: "primary", text: "Register" }),
          guest,
          cancel,
        ),
      );
      return [form, name];
    }

    const tabs = {
      login: h("button", { type: "button", role: "tab", text: "Sign in" }),
      register: h("button", { type: "button", role: "tab", text: "Create an account" }),
    };
    const body = h("div", { role: "tabpanel" });
    // Only the chosen form is in the dialog: Enter submits that one, and nothing else.
    const show = (which) => {
      for (const [key, tab] of Object.entries(tabs)) {
        tab.setAttribute("aria-selected", String(key === which));
        tab.tabIndex = key === which ? 0 : -1;
      }
      const [form, first] = which === "register" ? registerForm() : loginForm();
      mount(body, form);
      first.focus();
    };
    tabs.login.addEventListener("click", () => show("login"));
    tabs.register.addEventListener("click", () => show("register"));
    const dialog = h(
      "dialog",
      { class: "signin", "aria-labelledby": "signin-title", onClose: () => finish(null) },
      h("h2", { id: "signin-title", text: "Your account" }),
      reason ? h("p", { class: "muted", text: reason }) : null,
      h(
        "div",
        { class: "tabs", role: "tablist", "aria-label": "Sign in or register" },
        tabs.login,
        tabs.register,
      ),
      body,
    );
    document.body.append(dialog);
    dialog.showModal();
    show(mode);
  });
}

/** Keep the header's account area in step with the session. */
export function mountAccountBar(container) {
  const adminLink = document.querySelector("[data-admin-link]");
  session.subscribe((user) => {
    if (adminLink) adminLink.hidden = !(user && user.role === "admin");
    if (!user) {
      mount(
        container,
        h("button", { type: "button", onClick: () => openSignIn(), text: "Sign in" }),
        h("button", {
          type: "button",
          onClick: () => openSignIn("", "register"),
          text: "Register",
        }),
      );
      return;
    }
    mount(
      container,
      h("a", {
        href: `#/players/${encodeURIComponent(user.name)}`,
        class: "user-name",
        text: user.name,
      }),
      user.kind === "guest" ? h("span", { class: "muted", text: "(guest)" }) : null,
      h("button", { type: "button", onClick: () => session.signOut(), text: "Sign out" }),
    );
  });
}
