//! `#[derive(Tree)]`: implements `quabla::tree::Tree` for a struct whose fields are trees,
//! flattening them in field order. A field marked `#[tree(static)]` is not a leaf: it is
//! cloned into every rebuilt tree (a layer count, an activation, a name), as equinox's
//! static fields.
//!
//! ```ignore
//! use quabla::{tree::Tree, Array};
//!
//! #[derive(Clone, Tree)]
//! struct Mlp {
//!     layers: Vec<(Array, Array)>,
//!     #[tree(static)]
//!     width: usize,
//! }
//! ```

use proc_macro::TokenStream;
use proc_macro2::TokenStream as Tokens;
use quote::{format_ident, quote};
use syn::{parse_macro_input, parse_quote, Data, DeriveInput, Field, Fields, Index};

/// Derives `quabla::tree::Tree` for a struct (named, tuple or unit fields).
#[proc_macro_derive(Tree, attributes(tree))]
pub fn derive_tree(input: TokenStream) -> TokenStream {
    let ast = parse_macro_input!(input as DeriveInput);
    match expand(ast) {
        Ok(t) => t.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// Whether a field carries `#[tree(static)]`; any other `tree(...)` is an error.
fn is_static(field: &Field) -> syn::Result<bool> {
    let mut found = false;
    for attr in field.attrs.iter().filter(|a| a.path().is_ident("tree")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("static") {
                found = true;
                Ok(())
            } else {
                Err(meta.error("the only `tree` attribute is `#[tree(static)]`"))
            }
        })?;
    }
    Ok(found)
}

fn expand(mut ast: DeriveInput) -> syn::Result<Tokens> {
    let Data::Struct(data) = &ast.data else {
        return Err(syn::Error::new_spanned(
            &ast.ident,
            "derive(Tree) supports structs; implement quabla::tree::Tree by hand for enums and \
             unions",
        ));
    };
    let mut flatten = Vec::new();
    let mut rebuild = Vec::new();
    for (i, field) in data.fields.iter().enumerate() {
        let access = match &field.ident {
            Some(name) => quote!(#name),
            None => {
                let index = Index::from(i);
                quote!(#index)
            }
        };
        let value = if is_static(field)? {
            quote!(::core::clone::Clone::clone(&self.#access))
        } else {
            flatten.push(quote!(::quabla::tree::Tree::flatten_into(&self.#access, leaves);));
            quote!(::quabla::tree::Tree::unflatten_like(&self.#access, leaves)?)
        };
        rebuild.push(match &field.ident {
            Some(name) => quote!(#name: #value),
            None => value,
        });
    }
    let built = match &data.fields {
        Fields::Named(_) => quote!(Self { #(#rebuild),* }),
        Fields::Unnamed(_) => quote!(Self ( #(#rebuild),* )),
        Fields::Unit => quote!(Self),
    };
    // Every type parameter must itself be a tree (a `Vec<T>` field needs `T: Tree`).
    let params: Vec<_> = ast
        .generics
        .type_params()
        .map(|t| t.ident.clone())
        .collect();
    let where_clause = ast.generics.make_where_clause();
    for p in params {
        where_clause
            .predicates
            .push(parse_quote!(#p: ::quabla::tree::Tree));
    }
    let (impl_generics, ty_generics, where_clause) = ast.generics.split_for_impl();
    let name = &ast.ident;
    let leaves = format_ident!("leaves");
    Ok(quote! {
        impl #impl_generics ::quabla::tree::Tree for #name #ty_generics #where_clause {
            fn flatten_into(&self, #leaves: &mut ::std::vec::Vec<::quabla::Array>) {
                #(#flatten)*
                let _ = #leaves;
            }

            fn unflatten_like(
                &self,
                #leaves: &mut dyn ::core::iter::Iterator<Item = ::quabla::Array>,
            ) -> ::quabla::Result<Self> {
                let _ = &#leaves;
                ::core::result::Result::Ok(#built)
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::expand;
    use syn::{parse_quote, DeriveInput};

    fn error_of(ast: DeriveInput) -> String {
        expand(ast)
            .expect_err("the derive must refuse this")
            .to_string()
    }

    #[test]
    fn enums_and_unions_are_refused_with_what_to_do() {
        let e = error_of(parse_quote!(
            enum Shape {
                Circle(Array),
            }
        ));
        assert!(
            e.contains("supports structs") && e.contains("by hand"),
            "{e}"
        );
        let u = error_of(parse_quote!(
            union Bits {
                a: u32,
            }
        ));
        assert!(u.contains("supports structs"), "{u}");
    }

    #[test]
    fn only_the_static_attribute_is_known() {
        let e = error_of(parse_quote!(
            struct Layer {
                #[tree(skip)]
                w: Array,
            }
        ));
        assert!(
            e.contains("the only `tree` attribute is `#[tree(static)]`"),
            "{e}"
        );
    }

    /// The generated code: leaves in field order, static fields cloned, and a `Tree` bound on
    /// every type parameter.
    #[test]
    fn fields_flatten_in_order_and_parameters_are_bounded() {
        let code = expand(parse_quote!(
            struct Net<T> {
                a: T,
                #[tree(static)]
                n: usize,
                b: Array,
            }
        ))
        .unwrap()
        .to_string();
        let a = code.find("flatten_into (& self . a").expect("a flattened");
        let b = code.find("flatten_into (& self . b").expect("b flattened");
        assert!(a < b, "{code}");
        assert!(!code.contains("flatten_into (& self . n"), "{code}");
        assert!(code.contains("clone (& self . n)"), "{code}");
        assert!(code.contains("T : :: quabla :: tree :: Tree"), "{code}");
    }
}
