//! A message read into its kind, and the protocol's errors for what is malformed; the texts of
//! the messages Larik writes.

use serde::Serialize;
use serde_json::{Map, Value, json};

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i32,
    pub message: String,
    pub data: Option<Value>,
}

impl RpcError {
    pub const PARSE_ERROR: i32 = -32700;
    pub const INVALID_REQUEST: i32 = -32600;
    pub const METHOD_NOT_FOUND: i32 = -32601;
    pub const INVALID_PARAMS: i32 = -32602;
    pub const INTERNAL_ERROR: i32 = -32603;
    pub const REQUEST_CANCELLED: i32 = -32800;
    pub const AUTH_REQUIRED: i32 = -32000;
    pub const RESOURCE_NOT_FOUND: i32 = -32002;

    pub fn new(code: i32, message: impl Into<String>) -> Self {
        Self { code, message: message.into(), data: None }
    }

    pub fn method_not_found(method: &str) -> Self {
        Self::new(Self::METHOD_NOT_FOUND, format!("Method not found: {method}"))
    }

    pub fn to_json(&self) -> Value {
        let mut error = json!({"code": self.code, "message": self.message});
        if let Some(data) = &self.data {
            error["data"] = data.clone();
        }
        error
    }

    /// Reads an error object; what is missing reads as an internal error without a message.
    pub fn from_json(value: &Value) -> Self {
        Self {
            code: value
                .get("code")
                .and_then(Value::as_i64)
                .and_then(|code| i32::try_from(code).ok())
                .unwrap_or(Self::INTERNAL_ERROR),
            message: value.get("message").and_then(Value::as_str).unwrap_or_default().to_owned(),
            data: value.get("data").cloned(),
        }
    }
}

/// A message the other side sent.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    Request { id: Value, method: String, params: Value },
    Notification { method: String, params: Value },
    Response { id: Value, result: Result<Value, RpcError> },
}

/// A message that cannot be served, and the error owed for it (to `id`, null when it had none
/// that can be echoed).
#[derive(Debug, Clone, PartialEq)]
pub struct Malformed {
    pub id: Value,
    pub error: RpcError,
}

impl Malformed {
    fn new(id: Value, code: i32, message: impl Into<String>) -> Box<Self> {
        Box::new(Self { id, error: RpcError::new(code, message) })
    }
}

impl Incoming {
    /// Reads one framed message; `Ok(None)` for a blank one.
    pub fn parse(bytes: &[u8]) -> Result<Option<Self>, Box<Malformed>> {
        let text = String::from_utf8_lossy(bytes);
        let text = text.trim();
        if text.is_empty() {
            return Ok(None);
        }
        let message: Value = serde_json::from_str(text)
            .map_err(|error| Malformed::new(Value::Null, RpcError::PARSE_ERROR, format!("Parse error: {error}")))?;
        let Value::Object(object) = message else {
            let reason = if message.is_array() {
                "JSON-RPC batches are not supported"
            } else {
                "a message must be a JSON object"
            };
            return Err(Malformed::new(Value::Null, RpcError::INVALID_REQUEST, reason));
        };
        Self::from_object(object).map(Some)
    }

    fn from_object(mut object: Map<String, Value>) -> Result<Self, Box<Malformed>> {
        let id = object.remove("id");
        let params = object.remove("params").unwrap_or(Value::Null);
        let method = object.get("method").and_then(Value::as_str).map(str::to_owned);
        // Ids are strings, integers and null; a float or a number past i64 could not be echoed
        // back as sent (serde_json reads it as a float), so it is refused, not mangled.
        if let (Some(id), Some(_)) = (&id, &method)
            && !(id.is_null() || id.is_string() || id.is_i64())
        {
            let reason = format!("a request id must be a string, an integer or null, not {id}");
            return Err(Malformed::new(Value::Null, RpcError::INVALID_REQUEST, reason));
        }
        match (method, id) {
            (Some(method), Some(id)) => Ok(Self::Request { id, method, params }),
            (Some(method), None) => Ok(Self::Notification { method, params }),
            (None, Some(id)) if object.contains_key("result") || object.contains_key("error") => {
                let result = match object.get("error") {
                    Some(error) => Err(RpcError::from_json(error)),
                    None => Ok(object.remove("result").unwrap_or(Value::Null)),
                };
                Ok(Self::Response { id, result })
            }
            (None, id) => Err(Malformed::new(
                id.unwrap_or(Value::Null),
                RpcError::INVALID_REQUEST,
                "a message needs a method, or a result or error",
            )),
        }
    }
}

/// The text of a request.
pub fn request(id: i64, method: &str, params: &Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// The text of a notification; the params are serialized straight into it, without an
/// intermediate JSON tree.
pub fn notification(method: &str, params: impl Serialize) -> serde_json::Result<String> {
    #[derive(Serialize)]
    struct Notification<'a, P> {
        jsonrpc: &'static str,
        method: &'a str,
        params: P,
    }
    serde_json::to_string(&Notification { jsonrpc: "2.0", method, params })
}

/// The text of a response to the request `id`.
pub fn response(id: &Value, result: Result<Value, RpcError>) -> String {
    match result {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error.to_json()}),
    }
    .to_string()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn parse(text: &str) -> Result<Option<Incoming>, Box<Malformed>> {
        Incoming::parse(text.as_bytes())
    }

    #[test]
    fn each_kind_is_read_with_its_parts() {
        assert_eq!(
            parse(r#"{"jsonrpc":"2.0","id":"a","method":"m","params":{"x":1}}"#).unwrap(),
            Some(Incoming::Request { id: json!("a"), method: "m".into(), params: json!({"x": 1}) })
        );
        assert_eq!(
            parse(r#"{"jsonrpc":"2.0","method":"n"}"#).unwrap(),
            Some(Incoming::Notification { method: "n".into(), params: Value::Null })
        );
        assert_eq!(
            parse(r#"{"jsonrpc":"2.0","id":3,"result":null}"#).unwrap(),
            Some(Incoming::Response { id: json!(3), result: Ok(Value::Null) })
        );
        let refused = parse(r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"no"}}"#).unwrap();
        assert_eq!(refused, Some(Incoming::Response { id: json!(4), result: Err(RpcError::new(-32601, "no")) }));
        assert_eq!(parse(" \r").unwrap(), None);
    }

    #[test]
    fn what_cannot_be_served_gets_the_protocols_error() {
        let code = |text: &str| parse(text).unwrap_err();
        assert_eq!(code("{not json").error.code, RpcError::PARSE_ERROR);
        assert_eq!(code("[1,2]").error.message, "JSON-RPC batches are not supported");
        assert_eq!(code("7").error.code, RpcError::INVALID_REQUEST);
        for id in ["1.5", "true", "155555555555555555555555"] {
            let malformed = code(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"m"}}"#));
            assert_eq!((malformed.id, malformed.error.code), (Value::Null, RpcError::INVALID_REQUEST), "{id}");
        }
        let malformed = code(r#"{"jsonrpc":"2.0","id":9}"#);
        assert_eq!((malformed.id, malformed.error.code), (json!(9), RpcError::INVALID_REQUEST));
    }

    #[test]
    fn what_is_written_reads_back_as_what_was_meant() {
        let text = request(5, "m", &json!([1]));
        assert_eq!(
            parse(&text).unwrap(),
            Some(Incoming::Request { id: json!(5), method: "m".into(), params: json!([1]) })
        );
        let text = notification("n", ["a\nb"]).unwrap();
        assert!(!text.contains('\n'), "one message, one line: {text}");
        let error = RpcError { data: Some(json!({"why": 1})), ..RpcError::new(-32000, "login") };
        let text = response(&json!("r"), Err(error.clone()));
        assert_eq!(parse(&text).unwrap(), Some(Incoming::Response { id: json!("r"), result: Err(error) }));
    }
}
