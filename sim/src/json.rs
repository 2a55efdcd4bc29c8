//! JSON text to a `serde_json::Value`, refusing an object with the same key
//! twice (serde_json's own `Value` keeps the last one silently, so a
//! scenario with `"mode"` given twice would run in the second mode). The
//! error carries serde_json's line and column.
use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;

/// Parses `text` like `serde_json::from_str::<Value>`, but a repeated key in
/// any object is an error naming the key.
pub fn from_str_unique_keys(text: &str) -> Result<Value, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let v = Unique.deserialize(&mut de)?;
    de.end()?;
    Ok(v)
}

struct Unique;

impl<'de> DeserializeSeed<'de> for Unique {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Unique {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Value, E> {
        Ok(Value::from(n))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Value, E> {
        Ok(Value::from(n))
    }
    fn visit_f64<E>(self, n: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.to_owned()))
    }
    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(Unique)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Value, A::Error> {
        let mut v = Vec::new();
        while let Some(x) = a.next_element_seed(Unique)? {
            v.push(x);
        }
        Ok(Value::Array(v))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Value, A::Error> {
        let mut m = Map::new();
        while let Some(k) = a.next_key::<String>()? {
            if m.contains_key(&k) {
                return Err(A::Error::custom(format!("field `{k}` is given twice")));
            }
            let v = a.next_value_seed(Unique)?;
            m.insert(k, v);
        }
        Ok(Value::Object(m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_keys_are_refused_at_any_depth() {
        let e = from_str_unique_keys("{\"mode\": \"compiler\",\n \"mode\": \"hwonly\"}").unwrap_err();
        assert!(e.to_string().contains("field `mode` is given twice"), "{e}");
        assert_eq!(e.line(), 2);
        let e = from_str_unique_keys(r#"{"events": [{"op": "free", "op": "malloc"}]}"#).unwrap_err();
        assert!(e.to_string().contains("`op`"), "{e}");
    }

    #[test]
    fn same_value_as_serde_json_otherwise() {
        let t = r#"{"a": [1, -2, 3.5, "x", null, true, {"b": {}}], "c": 18446744073709551615}"#;
        assert_eq!(from_str_unique_keys(t).unwrap(), serde_json::from_str::<Value>(t).unwrap());
        assert!(from_str_unique_keys("{} x").is_err());
    }
}
