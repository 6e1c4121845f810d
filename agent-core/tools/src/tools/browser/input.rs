//! The input tools: `browser_click`, `browser_type`, `browser_press`, `browser_select` and
//! `browser_scroll`. Clicks and keys are real input events; each action then waits for a
//! navigation it may have started.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::browser::WebBrowser;
use crate::browser::page;
use crate::event::ToolKind;
use crate::tools::{CallDescription, Offer, Tool, ToolContext, ToolOutput};

/// Runs `action` on the active tab, waits for the page to settle, and reports `done` and where
/// the tab is now.
async fn act<F, Fut>(browser: &WebBrowser, done: String, action: F) -> ToolOutput
where
    F: FnOnce(chromiumoxide::Page) -> Fut,
    Fut: Future<Output = Result<(), crate::browser::BrowserError>>,
{
    let mut held = match super::held(browser).await {
        Ok(held) => held,
        Err(output) => return output,
    };
    let Ok(tab) = held.page().cloned() else { return ToolOutput::error("No tab is open.") };
    if let Err(error) = held.settle_after(action(tab)).await {
        return ToolOutput::error(error.to_string());
    }
    ToolOutput::text(format!("{done}\n{}", super::whereabouts(&held).await))
}

pub struct Click(pub Arc<WebBrowser>);

#[derive(Deserialize, JsonSchema)]
pub struct ClickInput {
    /// The element's ref from browser_snapshot (`e12`).
    #[serde(rename = "ref")]
    pub reference: String,
}

impl Tool for Click {
    type Input = ClickInput;
    const NAME: &'static str = "browser_click";
    const DESCRIPTION: &'static str = "Click an element of the browser's page by its ref from browser_snapshot: it is scrolled into view and clicked with real mouse events at its centre.";
    const KIND: ToolKind = ToolKind::Other;
    const OFFER: Offer = Offer::OnDemand;

    fn read_only(&self) -> bool {
        false
    }

    fn describe(&self, input: &ClickInput, _ctx: &ToolContext) -> CallDescription {
        CallDescription::titled(format!("Click {} in the browser", input.reference))
    }

    async fn run(&self, input: ClickInput, _ctx: &ToolContext) -> ToolOutput {
        let reference = input.reference;
        act(&self.0, format!("Clicked {reference}."), |tab| async move { page::click(&tab, &reference).await }).await
    }
}

pub struct Type(pub Arc<WebBrowser>);

#[derive(Deserialize, JsonSchema)]
pub struct TypeInput {
    /// The field's ref from browser_snapshot.
    #[serde(rename = "ref")]
    pub reference: String,
    /// What to type; the field is emptied first.
    pub text: String,
    /// Press Enter afterwards (submits most forms).
    #[serde(default)]
    pub submit: bool,
}

impl Tool for Type {
    type Input = TypeInput;
    const NAME: &'static str = "browser_type";
    const DESCRIPTION: &'static str = "Type text into a field of the browser's page by its ref from browser_snapshot: the field is focused and emptied, then the text is typed as key events; `submit: true` presses Enter after.";
    const KIND: ToolKind = ToolKind::Other;
    const OFFER: Offer = Offer::OnDemand;

    fn read_only(&self) -> bool {
        false
    }

    fn describe(&self, input: &TypeInput, _ctx: &ToolContext) -> CallDescription {
        CallDescription::titled(format!("Type into {} in the browser", input.reference))
    }

    async fn run(&self, input: TypeInput, _ctx: &ToolContext) -> ToolOutput {
        let TypeInput { reference, text, submit } = input;
        let done = format!(
            "Typed {} characters into {reference}{}.",
            text.chars().count(),
            if submit { " and pressed Enter" } else { "" }
        );
        act(&self.0, done, |tab| async move {
            page::focus_and_clear(&tab, &reference).await?;
            page::type_text(&tab, &text).await?;
            if submit {
                page::press(&tab, "Enter").await?;
            }
            Ok(())
        })
        .await
    }
}

pub struct Press(pub Arc<WebBrowser>);

#[derive(Deserialize, JsonSchema)]
pub struct PressInput {
    /// A key name (`Enter`, `Tab`, `Escape`, `ArrowDown`, `PageDown`, `a`), optionally with
    /// modifiers (`Control+a`, `Shift+Tab`).
    pub key: String,
}

impl Tool for Press {
    type Input = PressInput;
    const NAME: &'static str = "browser_press";
    const DESCRIPTION: &'static str = "Press a key in the browser's page, on whatever has the focus.";
    const KIND: ToolKind = ToolKind::Other;
    const OFFER: Offer = Offer::OnDemand;

    fn read_only(&self) -> bool {
        false
    }

    fn describe(&self, input: &PressInput, _ctx: &ToolContext) -> CallDescription {
        CallDescription::titled(format!("Press {} in the browser", input.key))
    }

    async fn run(&self, input: PressInput, _ctx: &ToolContext) -> ToolOutput {
        let key = input.key;
        act(&self.0, format!("Pressed {key}."), |tab| async move { page::press(&tab, &key).await }).await
    }
}

pub struct Select(pub Arc<WebBrowser>);

#[derive(Deserialize, JsonSchema)]
pub struct SelectInput {
    /// The `select` element's ref from browser_snapshot.
    #[serde(rename = "ref")]
    pub reference: String,
    /// The options to choose, by their text or value (several for a multiple select).
    pub values: Vec<String>,
}

impl Tool for Select {
    type Input = SelectInput;
    const NAME: &'static str = "browser_select";
    const DESCRIPTION: &'static str =
        "Choose options of a select element of the browser's page by its ref, by the options' text or value.";
    const KIND: ToolKind = ToolKind::Other;
    const OFFER: Offer = Offer::OnDemand;

    fn read_only(&self) -> bool {
        false
    }

    fn describe(&self, input: &SelectInput, _ctx: &ToolContext) -> CallDescription {
        CallDescription::titled(format!("Choose {} in {} in the browser", input.values.join(", "), input.reference))
    }

    async fn run(&self, input: SelectInput, _ctx: &ToolContext) -> ToolOutput {
        let SelectInput { reference, values } = input;
        let done = format!("Chose {} in {reference}.", values.join(", "));
        act(&self.0, done, |tab| async move {
            let wanted = serde_json::to_string(&values).unwrap_or_default();
            let body = format!(
                "if (!(el instanceof HTMLSelectElement)) return {{error: 'not a select element'}};
                 const wanted = {wanted};
                 const matches = Array.from(el.options).filter((o) => wanted.includes(o.value) || wanted.includes(o.text.trim()));
                 if (!matches.length) return {{error: 'no option matches ' + wanted.join(', ') + '; the options are: ' + Array.from(el.options).map((o) => o.text).join(' | ')}};
                 if (el.multiple) {{ for (const o of el.options) o.selected = matches.includes(o); }}
                 else {{ Object.getOwnPropertyDescriptor(HTMLSelectElement.prototype, 'value').set.call(el, matches[0].value); }}
                 el.dispatchEvent(new Event('input', {{bubbles: true}})); el.dispatchEvent(new Event('change', {{bubbles: true}}));
                 return {{chosen: matches.map((o) => o.text)}};"
            );
            let answer = page::on_element(&tab, &reference, &body).await?;
            match answer["error"].as_str() {
                Some(error) => {
                    Err(crate::browser::BrowserError::NotOnPage(format!("Could not choose in {reference}: {error}")))
                }
                None => Ok(()),
            }
        })
        .await
    }
}

pub struct Scroll(pub Arc<WebBrowser>);

#[derive(Deserialize, JsonSchema)]
pub struct ScrollInput {
    /// `down` (default), `up`, `top` or `bottom`.
    #[serde(default)]
    pub direction: Option<String>,
    /// Scroll this element into view instead (its ref from browser_snapshot).
    #[serde(rename = "ref", default)]
    pub reference: Option<String>,
}

impl Tool for Scroll {
    type Input = ScrollInput;
    const NAME: &'static str = "browser_scroll";
    const DESCRIPTION: &'static str =
        "Scroll the browser's page a screen down or up, to its top or bottom, or until an element (by ref) is in view.";
    const KIND: ToolKind = ToolKind::Other;
    const OFFER: Offer = Offer::OnDemand;

    fn read_only(&self) -> bool {
        true
    }

    fn concurrency_safe(&self) -> bool {
        false
    }

    fn describe(&self, input: &ScrollInput, _ctx: &ToolContext) -> CallDescription {
        CallDescription::titled(format!(
            "Scroll {} in the browser",
            input.reference.as_deref().or(input.direction.as_deref()).unwrap_or("down")
        ))
    }

    async fn run(&self, input: ScrollInput, _ctx: &ToolContext) -> ToolOutput {
        let direction = input.direction.unwrap_or_else(|| "down".into());
        let script = match direction.as_str() {
            "down" => "scrollBy(0, innerHeight * 0.85)",
            "up" => "scrollBy(0, -innerHeight * 0.85)",
            "top" => "scrollTo(0, 0)",
            "bottom" => "scrollTo(0, document.documentElement.scrollHeight)",
            other => return ToolOutput::error(format!("`{other}` is not a direction: down, up, top or bottom")),
        };
        let reference = input.reference;
        act(&self.0, "Scrolled.".into(), |tab| async move {
            match reference {
                Some(reference) => page::on_element(
                    &tab,
                    &reference,
                    "el.scrollIntoView({block: 'center', behavior: 'instant'}); return {};",
                )
                .await
                .map(drop),
                None => page::evaluate(&tab, script).await.map(drop),
            }?;
            let position = page::evaluate(
                &tab,
                "({y: Math.round(scrollY), height: document.documentElement.scrollHeight, view: innerHeight})",
            )
            .await?;
            tracing::debug!(%position, "scrolled");
            Ok(())
        })
        .await
    }
}
