use super::*;

fn err_op(r: Result<Value>) -> String {
    match r {
        Err(Error::Program { op, .. }) => op,
        other => panic!("expected a program error, got {other:?}"),
    }
}

#[test]
fn kinds_flow_through_operations() {
    let mut p = Program::new();
    let x = p.input("x", Kind::Signed { len: 4, bound: 10 }).unwrap();
    let y = p.input("y", Kind::Signed { len: 4, bound: 3 }).unwrap();
    let s = p.add(x, y).unwrap();
    assert_eq!(p.kind(s).unwrap(), Kind::Signed { len: 4, bound: 13 });
    let m = p.mul(x, y).unwrap();
    assert_eq!(p.kind(m).unwrap(), Kind::Signed { len: 4, bound: 30 });
    let d = p.dot(x, y).unwrap();
    assert_eq!(p.kind(d).unwrap(), Kind::Signed { len: 1, bound: 120 });
    let poly = p
        .polynomial(x, &[Scalar::Int(7), Scalar::Int(5), Scalar::Int(-2)])
        .unwrap();
    assert_eq!(
        p.kind(poly).unwrap(),
        Kind::Signed {
            len: 4,
            bound: 7 + 50 + 200
        }
    );
    let t = p.threshold(d, Scalar::Int(5)).unwrap();
    assert_eq!(p.kind(t).unwrap(), Kind::Bit { len: 1 });
    let u = p.input("u", Kind::Uint { len: 3, bits: 8 }).unwrap();
    let g = p.compare(u, Cmp::Gt, u).unwrap();
    let any = p.any(&[t, g]).unwrap();
    assert_eq!(p.kind(any).unwrap(), Kind::Bit { len: 1 });
    assert_eq!(err_op(p.any(&[t, d])), "any");
    assert_eq!(err_op(p.any(&[])), "any");
    let r = p.input("r", Kind::Real { len: 8 }).unwrap();
    let h = p.matvec(&vec![vec![0.5; 8]; 3], r).unwrap();
    assert_eq!(p.kind(h).unwrap(), Kind::Real { len: 3 });
}

#[test]
fn shape_and_kind_errors_name_the_operation() {
    let mut p = Program::new();
    let x = p.input("x", Kind::Real { len: 4 }).unwrap();
    let y = p.input("y", Kind::Real { len: 5 }).unwrap();
    let u = p.input("u", Kind::Uint { len: 4, bits: 8 }).unwrap();
    assert_eq!(err_op(p.add(x, y)), "add");
    assert_eq!(err_op(p.mul(x, u)), "mul");
    assert_eq!(err_op(p.add_scalar(u, Scalar::Real(0.5))), "add_scalar");
    assert_eq!(
        err_op(p.compare_scalar(x, Cmp::Gt, Scalar::Real(0.0))),
        "compare_scalar"
    );
    assert_eq!(err_op(p.matvec(&[vec![1.0; 3]], x)), "matvec");
    assert_eq!(err_op(p.matvec(&[vec![1.0; 4]], u)), "matvec");
    assert_eq!(err_op(p.dot_plain(x, &[Scalar::Real(1.0)])), "dot_plain");
    assert_eq!(err_op(p.select(u, u, u)), "select");
    assert_eq!(
        err_op(p.compare_scalar(u, Cmp::Lt, Scalar::Int(256))),
        "compare_scalar"
    );
    assert_eq!(
        err_op(p.compare_scalar(u, Cmp::Lt, Scalar::Int(-1))),
        "compare_scalar"
    );
    assert_eq!(err_op(p.input("x", Kind::Real { len: 1 })), "input");
    assert_eq!(
        err_op(p.input("z", Kind::Uint { len: 1, bits: 7 })),
        "input"
    );
    let big = p
        .input(
            "b",
            Kind::Signed {
                len: 2,
                bound: 1 << 30,
            },
        )
        .unwrap();
    assert_eq!(err_op(p.mul(big, big)), "mul");
    let mut other = Program::new();
    assert_eq!(err_op(other.sum(x)), "sum");
}
