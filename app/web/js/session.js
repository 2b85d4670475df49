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

/** The sign-in dialog: log in, register, or play as a guest. Resolves with the user or null. */
export function openSignIn(reason = "") {
  return new Promise((resolve) => {
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
    let done = false;
    const finish = (user) => {
      if (done) return;
      done = true;
      dialog.close();
      dialog.remove();
      resolve(user);
    };
    const submit = async (kind) => {
      error.textContent = "";
      if (kind !== "guest" && (!name.value.trim() || !password.value)) {
        error.textContent = "Enter a name and a password.";
        return;
      }
      try {
        const user = await session.signIn(kind, name.value.trim(), password.value);
        toast(`Signed in as ${user.name}`);
        finish(user);
      } catch (err) {
        error.textContent = err.message;
      }
    };
    const form = h(
      "form",
      {
        method: "dialog",
        onSubmit: (event) => {
          event.preventDefault();
          submit(event.submitter && event.submitter.value === "register" ? "register" : "login");
        },
      },
      h("h2", { id: "signin-title", text: "Sign in" }),
      reason ? h("p", { class: "muted", text: reason }) : null,
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
        h("button", { type: "submit", class: "primary", value: "login", text: "Log in" }),
        h("button", { type: "submit", value: "register", text: "Register" }),
        h("button", { type: "button", onClick: () => submit("guest"), text: "Play as a guest" }),
        h("button", { type: "button", onClick: () => finish(null), text: "Cancel" }),
      ),
    );
    const dialog = h(
      "dialog",
      { "aria-labelledby": "signin-title", onClose: () => finish(null) },
      form,
    );
    document.body.append(dialog);
    dialog.showModal();
    name.focus();
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
